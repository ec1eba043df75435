/**
 * The pluginregistration.v1 Registration client over a plugin's unix socket
 * (upstream pluginmanager operationexecutor dial): GetInfo and
 * NotifyRegistrationStatus, each with a 10 s deadline.
 */
import * as grpc from '@grpc/grpc-js';
import { RegistrationClient, type PluginInfo as WirePluginInfo } from '../../gen/pluginregistration/v1/api.js';
import { rpcErrorMessage } from '../../common/rpc-error.js';
import type { RegistrationConn } from './plugin-watcher.js';

const TIMEOUT_MS = 10_000;

export function dialRegistration(socketPath: string): RegistrationConn {
  const client = new RegistrationClient(`unix://${socketPath}`, grpc.credentials.createInsecure());
  const deadline = () => ({ deadline: Date.now() + TIMEOUT_MS });
  return {
    getInfo: () =>
      new Promise((resolve, reject) =>
        client.getInfo({}, new grpc.Metadata(), deadline(), (err: grpc.ServiceError | null, res: WirePluginInfo) =>
          err ? reject(new Error(rpcErrorMessage(err), { cause: err })) : resolve(res),
        ),
      ),
    notifyRegistrationStatus: (pluginRegistered, error) =>
      new Promise((resolve, reject) =>
        client.notifyRegistrationStatus({ pluginRegistered, error }, new grpc.Metadata(), deadline(), (err: grpc.ServiceError | null) =>
          err ? reject(new Error(rpcErrorMessage(err), { cause: err })) : resolve(),
        ),
      ),
    close: () => client.close(),
  };
}
