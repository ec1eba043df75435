/**
 * piscina worker entry. Each worker thread builds one TaskContext (one CRI
 * client, the attached shared-memory views) at start and keeps it for its
 * lifetime; every task is a plain function of its request plus that context.
 */
import { Piscina } from 'piscina';
import type { TaskRequest } from './protocol/protocol.js';
import type { WorkerInit } from '../shared/shared-state.js';
import { createTaskContext, runTask } from './tasks.js';

const ctx = createTaskContext(Piscina.workerData as WorkerInit);

export default function handle(request: TaskRequest) {
  return runTask(ctx, request);
}
