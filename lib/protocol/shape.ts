/**
 * What each revision can carry. We shape what we send to the negotiated revision instead of sending
 * fields an older peer does not know.
 */
import type { CallToolResult, Tool } from './types';
import { isAtLeast } from './versions';

type ToolField = keyof Tool;

const TOOL_FIELDS: ReadonlyArray<readonly [ToolField, '2024-11-05' | '2025-03-26' | '2025-06-18' | '2025-11-25']> = [
  ['name', '2024-11-05'],
  ['description', '2024-11-05'],
  ['inputSchema', '2024-11-05'],
  ['annotations', '2025-03-26'],
  ['title', '2025-06-18'],
  ['outputSchema', '2025-06-18'],
  ['_meta', '2025-06-18'],
  ['icons', '2025-11-25'],
  ['execution', '2025-11-25'],
];

/** The tool as a peer of `version` knows it (a new object only when something had to go). */
export function shapeTool(tool: Tool, version: string): Tool {
  const shaped: Record<string, unknown> = {};
  let dropped = false;
  for (const [field, since] of TOOL_FIELDS) {
    const value = tool[field];
    if (value === undefined) continue;
    if (isAtLeast(version, since)) shaped[field] = value;
    else dropped = true;
  }
  return dropped || Object.keys(shaped).length !== Object.keys(tool).length ? (shaped as unknown as Tool) : tool;
}

/** `structuredContent` exists since 2025-06-18; older peers read the JSON text block instead. */
export function shapeCallToolResult(result: CallToolResult, version: string): CallToolResult {
  if (result.structuredContent === undefined || isAtLeast(version, '2025-06-18')) return result;
  const { structuredContent: _dropped, ...rest } = result;
  return rest as CallToolResult;
}
