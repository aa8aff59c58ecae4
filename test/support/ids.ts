/** The UUID inside a global ID (tests only: clients must treat IDs as opaque). */
export function rawId(globalId: string): string {
  return Buffer.from(globalId, 'base64url').toString('utf8').split(':')[1]!;
}
