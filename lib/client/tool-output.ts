import { ResultValidationError } from '../jsonrpc/errors';
import type { CallToolResult, Tool } from '../protocol/types';
import type { SchemaCheck, SchemaValidator } from '../validation/json-schema';

/**
 * The output schemas of the tools from the last complete `listTools`, compiled, so `callTool` can check
 * `structuredContent`. Forgotten on `tools/list_changed` until the next complete list.
 */
export class ToolOutputChecks {
  private checks: Map<string, SchemaCheck> | undefined;

  constructor(private readonly validator: SchemaValidator) {}

  remember(tools: readonly Tool[]): void {
    const checks = new Map<string, SchemaCheck>();
    for (const tool of tools) {
      if (tool.outputSchema && typeof tool.outputSchema === 'object') {
        checks.set(tool.name, this.validator.compile(tool.outputSchema));
      }
    }
    this.checks = checks;
  }

  forget(): void {
    this.checks = undefined;
  }

  /** The call's result, checked against the tool's output schema when one is known. */
  checked(name: string, pending: Promise<CallToolResult>): Promise<CallToolResult> {
    const check = this.checks?.get(name);
    return check ? pending.then((result) => checkToolOutput(name, result, check)) : pending;
  }
}

function checkToolOutput(name: string, result: CallToolResult, check: SchemaCheck): CallToolResult {
  if (result.isError) return result;
  if (result.structuredContent === undefined) {
    throw new ResultValidationError(
      `Tool ${name} has an outputSchema but returned no structuredContent`,
      'tools/call',
      '/structuredContent',
    );
  }
  const problems = check(result.structuredContent);
  if (problems) {
    throw new ResultValidationError(
      `Tool ${name} returned structuredContent that does not match its outputSchema: ${problems.join('; ')}`,
      'tools/call',
      '/structuredContent',
    );
  }
  return result;
}
