/**
 * The validator's checks of a GENERIC declaration (pure: no I/O): the canonical tool as MCP lists
 * it, `{ name, description, inputSchema }`, with an object input schema of bounded size. Part of
 * the validator (`../rules.ts`), which shares no code with the compiler.
 */
import { checkKeys, isObj, type Obj, quote, type Report } from './common.js';
import { walk } from './walk.js';

/** GENERIC: `{ name, description, inputSchema }`, the canonical tool as it is. */
export function checkGeneric(decl: Obj, report: Report): void {
  checkKeys(decl, ['name', 'description', 'inputSchema'], 'generic.shape', '', report);
  if (typeof decl.description !== 'string')
    report.add('generic.shape', '/description', 'description is not a string');
  if (!isObj(decl.inputSchema))
    return report.add('generic.shape', '/inputSchema', 'inputSchema is not an object');
  if (decl.inputSchema.type !== 'object')
    report.add(
      'generic.input-schema.object',
      '/inputSchema/type',
      `type is ${quote(decl.inputSchema.type)}, not "object"`,
    );
  walk(decl.inputSchema, '/inputSchema', report, () => undefined);
}
