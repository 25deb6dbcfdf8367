/**
 * An upstream may list a tool whose schema is not a valid JSON Schema. The hub defines every upstream tool it
 * offers, and a definition refuses an invalid schema: the catalog must leave such a tool out with a warning
 * (a throw there ended the hub's process), and keep the upstream's other tools.
 */
import { describe, expect, it } from 'vitest';
import { HubCatalog, type CatalogSource } from '../../lib/compose/catalog';
import { DEFAULT_NAMING } from '../../lib/compose/naming';
import type { UpstreamCatalog } from '../../lib/compose/session';

function source(name: string, catalog: Partial<UpstreamCatalog>): CatalogSource {
  return {
    name,
    naming: DEFAULT_NAMING,
    accepts: { tools: () => true, prompts: () => true, resources: () => true },
    serving: true,
    catalog: { capabilities: {}, tools: [], prompts: [], resources: [], resourceTemplates: [], ...catalog },
  } as unknown as CatalogSource;
}

describe("the hub's catalog and an upstream tool whose schema is invalid", () => {
  it.each([
    [
      'a required list that is a string',
      { type: 'object', required: 'city' },
      /inputSchema is not a valid JSON Schema/,
    ],
    [
      'a dialect the validator does not know',
      { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
      /inputSchema/,
    ],
  ])('leaves out a tool with %s and keeps the valid one', (_label, inputSchema, says) => {
    const built = new HubCatalog().build([
      source('weather', {
        tools: [
          { name: 'broken', inputSchema } as never,
          { name: 'forecast', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
        ],
      }),
    ]);
    expect(built.tools.map((tool) => tool.name)).toEqual(['forecast']);
    expect(built.problems).toHaveLength(1);
    expect(built.problems[0]!.message).toMatch(/^weather offers an invalid tool "broken": its /);
    expect(built.problems[0]!.message).toMatch(says);
    expect(built.problems[0]!.message).toMatch(/; it is left out$/);
  });

  it('leaves out an invalid output schema too', () => {
    const built = new HubCatalog().build([
      source('weather', {
        tools: [
          { name: 'broken', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: 5 } } as never,
        ],
      }),
    ]);
    expect(built.tools).toEqual([]);
    expect(built.problems[0]!.message).toMatch(/its outputSchema is not a valid JSON Schema/);
  });
});
