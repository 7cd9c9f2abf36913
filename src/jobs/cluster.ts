/**
 * The cluster the scheduled jobs run on (`@effect/cluster`): every instance is a runner that
 * talks to the others over a socket, with runner and message storage in the service's own
 * PostgreSQL, reached through a small pool of its own (`CLUSTER_DB_POOL_SIZE`) so that the storage's
 * lock connection and pollers cannot take the connections HTTP requests need. The jobs' own work
 * still runs on the service's pool. A `ClusterCron` run is a persisted message to one entity, owned by one runner at a
 * time, so each run happens once however many instances are up. One instance is a cluster of one.
 *
 * Mirrors `NodeClusterSocket.layer` of @effect/platform-node, but with the sharding config built
 * from our settings: the stock layer also reads HOST and PORT from the environment, which here
 * mean the HTTP server's.
 */
import { RunnerAddress, RunnerHealth, Runners, ShardingConfig, SocketRunner, SqlMessageStorage, SqlRunnerStorage } from "@effect/cluster"
import { NodeClusterSocket } from "@effect/platform-node"
import { RpcSerialization } from "@effect/rpc"
import { Duration, Layer, Option } from "effect"
import type { JobsConfig } from "../config.js"
import { clusterPgClientLayer } from "../db/Database.js"

export const clusterLayer = (
  config: Pick<JobsConfig, "clusterHost" | "clusterPort" | "clusterPollSeconds" | "clusterDbPoolSize">
) => {
  const sharding = ShardingConfig.layer({
    runnerAddress: Option.some(RunnerAddress.make(config.clusterHost, config.clusterPort)),
    entityMessagePollInterval: Duration.seconds(config.clusterPollSeconds),
    // Fewer shards than the default 300: the jobs are a handful of singletons and cron entities.
    shardsPerGroup: 30
  })
  const health = RunnerHealth.layerPing.pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(NodeClusterSocket.layerClientProtocol)
  )
  return SocketRunner.layer.pipe(
    Layer.provide([NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]),
    Layer.provide(health),
    Layer.provideMerge(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide(Layer.orDie(SqlRunnerStorage.layer)),
    // Provided, not merged: the jobs built on this layer keep the service's SqlClient.
    Layer.provide(Layer.orDie(clusterPgClientLayer(config.clusterDbPoolSize))),
    Layer.provide(sharding),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
}
