/**
 * The review's hostile description (issue #10, finding 7): a YAML description whose operations all
 * share one large request schema through anchors and aliases, within the alias cap.
 */
export interface AliasedOptions {
  /** Operations, each with its own path and the shared body. */
  operations?: number;
  /**
   * Properties per object level of the shared schema (three levels). At 16 it expands to about
   * 16,000 nodes per operation, 4.9 million in all: just within the parser's alias cap of 5 million.
   */
  width?: number;
}

export function aliasedDescription({ operations = 300, width = 16 }: AliasedOptions = {}): string {
  const lines: string[] = [
    'openapi: 3.0.3',
    'info: { title: Aliased, version: "1" }',
    'servers: [{ url: "https://api.example.com" }]',
    'x-shared:',
    '  leaf: &leaf',
    '    type: object',
    '    description: A leaf object with many described properties, repeated through aliases.',
    '    properties:',
  ];
  for (let i = 0; i < width; i++)
    lines.push(`      f${i}: { type: string, description: "Field number ${i} of the leaf object" }`);
  lines.push('  mid: &mid', '    type: object', '    properties:');
  for (let i = 0; i < width; i++) lines.push(`      m${i}: *leaf`);
  lines.push('  body: &body', '    required: true', '    content:', '      application/json:');
  lines.push('        schema:', '          type: object', '          properties:');
  for (let i = 0; i < width; i++) lines.push(`            b${i}: *mid`);
  lines.push('paths:');
  for (let i = 0; i < operations; i++) {
    lines.push(
      `  /things/${i}/{id}:`,
      '    post:',
      `      operationId: updateThing${i}`,
      `      summary: Update thing number ${i} with the shared body`,
      `      description: This operation takes the shared request body through a YAML alias; it is number ${i} of ${operations}.`,
      '      parameters:',
      '        - { name: id, in: path, required: true, schema: { type: string } }',
      '        - { name: verbose, in: query, schema: { type: boolean } }',
      '      requestBody: *body',
      '      responses: { "200": { description: ok } }',
    );
  }
  return `${lines.join('\n')}\n`;
}
