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
 *
 * The runner's socket is opened first, on CLUSTER_PORT or (unset) on a free port the system picks,
 * and the runner registers the port it actually got: several instances on one host need no
 * configuration. An explicit CLUSTER_PORT that is taken stops the start with `ClusterPortUnavailable`.
 */
import {
  RunnerAddress,
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "@effect/cluster"
import { SocketServer } from "@effect/platform"
import { NodeClusterSocket, NodeSocketServer } from "@effect/platform-node"
import { RpcSerialization } from "@effect/rpc"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { clusterPgClientLayer } from "../db/Database.js"
import type { JobsConfig } from "./config.js"

/** The job runner's socket could not be opened: the message names the setting to change. */
export class ClusterPortUnavailable extends Schema.TaggedError<ClusterPortUnavailable>()("ClusterPortUnavailable", {
  message: Schema.String
}) {}

const openFailure = (config: Pick<JobsConfig, "clusterHost" | "clusterPort">, cause: unknown) => {
  const code = (cause as { code?: unknown } | undefined)?.code
  const reason = typeof code === "string" ? code : String(cause)
  return Option.match(config.clusterPort, {
    onSome: (port) =>
      new ClusterPortUnavailable({
        message: code === "EADDRINUSE"
          ? `CLUSTER_PORT ${port} on ${config.clusterHost} is in use (another instance of this service?): ` +
            "set CLUSTER_PORT to a free port, or leave it unset and a free port is picked"
          : `the job runner could not listen on CLUSTER_HOST ${config.clusterHost}, CLUSTER_PORT ${port} (${reason})`
      }),
    onNone: () =>
      new ClusterPortUnavailable({
        message: `the job runner could not listen on CLUSTER_HOST ${config.clusterHost} (${reason}): ` +
          "set CLUSTER_HOST to an address of this machine"
      })
  })
}

/** The runner's socket server, and the sharding config that registers the port it listens on. */
const runnerSocket = (
  config: Pick<JobsConfig, "clusterHost" | "clusterPort" | "clusterPollSeconds">
) => {
  const server = Layer.scoped(
    SocketServer.SocketServer,
    NodeSocketServer.make({ host: config.clusterHost, port: Option.getOrElse(config.clusterPort, () => 0) }).pipe(
      Effect.mapError((e) => openFailure(config, e.cause))
    )
  )
  const sharding = Layer.unwrapEffect(Effect.map(SocketServer.SocketServer, ({ address }) =>
    ShardingConfig.layer({
      runnerAddress: Option.some(RunnerAddress.make(
        config.clusterHost,
        address._tag === "TcpAddress" ? address.port : Option.getOrElse(config.clusterPort, () => 0)
      )),
      entityMessagePollInterval: Duration.seconds(config.clusterPollSeconds),
      // Fewer shards than the default 300: the jobs are a handful of singletons and cron entities.
      shardsPerGroup: 30
    })))
  return Layer.provideMerge(sharding, server)
}

export const clusterLayer = (
  config: Pick<JobsConfig, "clusterHost" | "clusterPort" | "clusterPollSeconds" | "clusterDbPoolSize">
) => {
  const sharding = runnerSocket(config)
  const health = RunnerHealth.layerPing.pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(NodeClusterSocket.layerClientProtocol)
  )
  return SocketRunner.layer.pipe(
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provide(health),
    Layer.provideMerge(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide(Layer.orDie(SqlRunnerStorage.layer)),
    // Provided, not merged: the jobs built on this layer keep the service's SqlClient.
    Layer.provide(Layer.orDie(clusterPgClientLayer(config.clusterDbPoolSize))),
    Layer.provide(sharding),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
}
