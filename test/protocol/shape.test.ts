import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  contentRefusal,
  FIELDS,
  shape,
  shapeCallToolResult,
  shapeContent,
  type ShapedType,
} from '../../lib/protocol/shape';
import { isAtLeast, SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';
import type { ContentBlock } from '../../lib/protocol/types';

function definitions(version: string): Record<string, { properties?: Record<string, any> }> {
  const schema = JSON.parse(readFileSync(new URL(`../schemas/schema-${version}.json`, import.meta.url), 'utf8'));
  return schema.$defs ?? schema.definitions;
}

/** The schema's property names of `type` at `version` (empty when the revision has no such type). */
function schemaFields(type: ShapedType, version: string): string[] {
  const defs = definitions(version);
  // 2024-11-05 declares annotations inline (its `Annotated` base), not as a type of their own.
  const definition = type === 'Annotations' && !defs.Annotations ? defs.Resource!.properties!.annotations : defs[type];
  return Object.keys(definition?.properties ?? {}).sort();
}

describe('the shaping tables', () => {
  for (const type of Object.keys(FIELDS) as ShapedType[]) {
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      it(`${type} at ${version} has exactly the schema's fields`, () => {
        const table: Record<string, string> = FIELDS[type];
        const available = Object.keys(table).filter((field) => isAtLeast(version, table[field] as never));
        expect(available.sort()).toEqual(schemaFields(type, version));
      });
    }
  }
});

describe('shaping', () => {
  const resource = {
    uri: 'file:///a',
    name: 'a',
    title: 'A',
    icons: [{ src: 'https://x/i.png' }],
    annotations: { audience: ['user' as const], priority: 1, lastModified: '2025-01-01T00:00:00Z' },
    _meta: { k: 1 },
  };

  it('returns the very object when nothing has to go', () => {
    expect(shape('Resource', resource, '2025-11-25')).toBe(resource);
  });

  it('drops newer fields, nested ones included, keeping field order', () => {
    expect(shape('Resource', resource, '2024-11-05')).toEqual({
      uri: 'file:///a',
      name: 'a',
      annotations: { audience: ['user'], priority: 1 },
    });
    expect(Object.keys(shape('Resource', resource, '2025-06-18'))).toEqual([
      'uri',
      'name',
      'title',
      'annotations',
      '_meta',
    ]);
    expect(shape('Prompt', { name: 'p', arguments: [{ name: 'x', title: 'X' }] }, '2025-03-26')).toEqual({
      name: 'p',
      arguments: [{ name: 'x' }],
    });
  });

  it('turns a resource link into text before 2025-06-18', () => {
    const link: ContentBlock = { type: 'resource_link', uri: 'file:///r', name: 'r', description: 'the r' };
    expect(shapeContent(link, '2025-03-26')).toEqual({ type: 'text', text: 'r: file:///r (the r)' });
    expect(shapeContent(link, '2025-06-18')).toBe(link);
  });

  it('refuses audio before 2025-03-26', () => {
    const audio: ContentBlock = { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' };
    expect(contentRefusal(audio, '2025-03-26')).toBeUndefined();
    expect(contentRefusal(audio, '2024-11-05')).toBe(
      'audio content, which protocol revision 2024-11-05 cannot carry (it needs 2025-03-26 or later)',
    );
  });

  it('refuses content of an unknown type', () => {
    expect(contentRefusal({ type: 'video' } as never, '2025-11-25')).toBe('content of unknown type "video"');
  });

  it('shapes embedded resources inside content', () => {
    const embedded: ContentBlock = {
      type: 'resource',
      resource: { uri: 'file:///e', text: 'x', _meta: { a: 1 } },
      _meta: { b: 2 },
    };
    expect(shapeContent(embedded, '2025-03-26')).toEqual({
      type: 'resource',
      resource: { uri: 'file:///e', text: 'x' },
    });
  });

  it('turns a tool result that cannot be carried into a tool error', () => {
    const result = { content: [{ type: 'audio' as const, data: 'AAAA', mimeType: 'audio/wav' }] };
    expect(shapeCallToolResult(result, '2024-11-05')).toEqual({
      content: [
        {
          type: 'text',
          text: 'The tool returned audio content, which protocol revision 2024-11-05 cannot carry (it needs 2025-03-26 or later)',
        },
      ],
      isError: true,
    });
  });
});
