/**
 * The validator's checks of an ANTHROPIC declaration (pure: no I/O): a Messages API `tools` entry,
 * `{ name, description?, input_schema }`, whose root has no `oneOf`/`anyOf`/`allOf`, which is valid
 * JSON Schema 2020-12, and whose property keys Anthropic takes. Part of the validator
 * (`../rules.ts`), which shares no code with the compiler.
 */
import {
  checkDescription,
  checkKeys,
  checkMetaSchema,
  checkName,
  isObj,
  type Obj,
  quote,
  type Report,
  seg,
} from './common.js';
import { ANTHROPIC_NAME_PATTERN, ANTHROPIC_PROPERTY_KEY_PATTERN } from './table.js';
import { walk } from './walk.js';

/** ANTHROPIC: a Messages API `tools` entry. */
export function checkAnthropic(decl: Obj, report: Report): void {
  checkKeys(
    decl,
    ['name', 'description', 'input_schema', 'type', 'cache_control'],
    'anthropic.shape',
    '',
    report,
  );
  checkName(decl.name, ANTHROPIC_NAME_PATTERN, 'anthropic.name', '/name', report);
  checkDescription(decl.description, 'anthropic.shape', '/description', report);
  if (decl.type !== undefined && decl.type !== 'custom')
    report.add('anthropic.shape', '/type', `type is ${quote(decl.type)}, not "custom"`);
  const schema = decl.input_schema;
  const at = '/input_schema';
  if (!isObj(schema))
    return report.add('anthropic.input-schema.object', at, 'input_schema is missing or not an object');
  if (schema.type !== 'object')
    report.add('anthropic.input-schema.object', at + '/type', `type is ${quote(schema.type)}, not "object"`);
  for (const keyword of ['oneOf', 'anyOf', 'allOf'])
    if (schema[keyword] !== undefined)
      report.add(
        'anthropic.input-schema.root-composition',
        at + seg(keyword),
        `${keyword} at the top level of input_schema`,
      );
  checkMetaSchema(schema, 'anthropic.schema.valid', at, report);
  walk(schema, at, report, (value, here) => {
    if (!isObj(value) || !isObj(value.properties)) return;
    for (const key of Object.keys(value.properties))
      if (!ANTHROPIC_PROPERTY_KEY_PATTERN.test(key))
        report.add(
          'anthropic.schema.property-key',
          here() + '/properties' + seg(key),
          `property key ${quote(key)} does not match ${String(ANTHROPIC_PROPERTY_KEY_PATTERN)}`,
        );
  });
}
