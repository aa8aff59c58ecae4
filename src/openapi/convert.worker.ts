/**
 * Worker-thread entry of the description pool (`pool.ts`): one job at a time, plain data in and
 * out. It says `ready` once its modules are loaded, so a job's time limit never counts start-up.
 */
import { parentPort } from 'node:worker_threads';
import { runConvertJob, type ConvertJob } from './convert-job.js';

const port = parentPort;
if (port === null) throw new Error('convert.worker.ts runs only as a worker thread');
port.on('message', (message: { id: number; job: ConvertJob }) => {
  port.postMessage({ id: message.id, outcome: runConvertJob(message.job) });
});
port.postMessage({ ready: true });
