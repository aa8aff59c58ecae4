/**
 * What the model is told when the far side of a call fails (pure, a leaf): the one wording for a
 * timeout, an unreachable server and a connection that broke mid-call, for MCP tool servers
 * (`result.ts#fromMcpOutcome`) and OpenAPI services (`dispatch.ts`) alike. Each says whether the
 * tool may have done its work, since that decides whether the model may try again.
 */

/** Said whenever the request may have reached the server. */
export const MAY_HAVE_DONE_ITS_WORK =
  'It may have done its work anyway; check before repeating anything that changes data.';

/** Said when the request never reached the server. */
export const NOTHING_WAS_DONE = 'Nothing was done; it may work if tried again later.';

/** A timeout in seconds, to one decimal place (`10000` → `10`, `1250` → `1.3`, `400` → `0.4`). */
export function timeoutSeconds(timeoutMs: number): string {
  return String(Math.round(timeoutMs / 100) / 10);
}

/** `subject` (such as `The tool x`, `The API behind x`) did not answer within the timeout. */
export function timeoutText(subject: string, timeoutMs: number): string {
  return `${subject} did not answer within ${timeoutSeconds(timeoutMs)} s. ${MAY_HAVE_DONE_ITS_WORK}`;
}

/** `subject` (such as `The tool server for x`) could not be reached: nothing was sent. */
export function unreachableText(subject: string): string {
  return `${subject} could not be reached. ${NOTHING_WAS_DONE}`;
}

/** The connection to `far` (such as `the API behind x`) broke after the request went out. */
export function brokeText(far: string): string {
  return `The connection to ${far} broke during the call. ${MAY_HAVE_DONE_ITS_WORK}`;
}
