import { deepFreeze } from '../core/freeze';
import type { Implementation, ServerCapabilities } from '../protocol/types';
import { SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from '../protocol/versions';
import { defaultValidator, type SchemaValidator } from '../validation/json-schema';
import { defineTool, ToolCatalog, type ToolDefinition } from './tools';

export interface ServerSpec extends Implementation {
  /** A usage hint the client may put in the model's system prompt. */
  readonly instructions?: string;
  /** Declaring `tools` (even empty) declares the tools capability. */
  readonly tools?: readonly ToolDefinition<any>[];
  /** Items per page of a list result (default 100). */
  readonly pageSize?: number;
  /** Revisions this server accepts, newest first (default: all four). */
  readonly protocolVersions?: readonly ProtocolVersion[];
  /** Validates tool input and output; defaults to a process-wide Ajv validator. */
  readonly validator?: SchemaValidator;
  /** Extra entries under `capabilities.experimental`. */
  readonly experimental?: Readonly<Record<string, object>>;
}

export const DEFAULT_PAGE_SIZE = 100;

/**
 * What a server offers: immutable, and shared by any number of connections (one per client). A changed
 * server is a new definition (`withTools`, `withoutTools`), handed to `Server.update`.
 */
export class ServerDefinition {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly tools: ToolCatalog | undefined;
  readonly pageSize: number;
  readonly protocolVersions: readonly ProtocolVersion[];
  readonly capabilities: ServerCapabilities;

  private constructor(
    private readonly spec: ServerSpec,
    private readonly validator: SchemaValidator,
  ) {
    const { name, version, title, description, icons, websiteUrl } = spec;
    this.info = Object.freeze({
      name,
      version,
      ...(title !== undefined && { title }),
      ...(description !== undefined && { description }),
      ...(icons !== undefined && { icons }),
      ...(websiteUrl !== undefined && { websiteUrl }),
    });
    this.instructions = spec.instructions;
    this.tools =
      spec.tools &&
      new ToolCatalog(
        spec.tools.map((tool) => defineTool(tool)),
        validator,
      );
    this.pageSize = spec.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!(this.pageSize >= 1)) throw new RangeError('pageSize must be at least 1');
    this.protocolVersions = spec.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    if (this.protocolVersions.length === 0) throw new RangeError('protocolVersions must not be empty');
    this.capabilities = spec.experimental
      ? deepFreeze({ ...baseCapabilities(this), experimental: spec.experimental })
      : baseCapabilities(this);
    Object.freeze(this);
  }

  static create(spec: ServerSpec): ServerDefinition {
    return new ServerDefinition(spec, spec.validator ?? defaultValidator());
  }

  /** A definition with these tools added, replacing tools of the same name. */
  withTools(...tools: ToolDefinition<any>[]): ServerDefinition {
    const names = new Set(tools.map((tool) => tool.name));
    const kept = (this.spec.tools ?? []).filter((tool) => !names.has(tool.name));
    return new ServerDefinition({ ...this.spec, tools: [...kept, ...tools] }, this.validator);
  }

  /** A definition without the named tools. */
  withoutTools(...names: string[]): ServerDefinition {
    const removed = new Set(names);
    return new ServerDefinition(
      { ...this.spec, tools: (this.spec.tools ?? []).filter((tool) => !removed.has(tool.name)) },
      this.validator,
    );
  }
}

const sharedCapabilities = new Map<string, ServerCapabilities>();

/** What a definition declares, as one frozen object shared by every definition that declares the same. */
function baseCapabilities(definition: ServerDefinition): ServerCapabilities {
  const key = definition.tools ? 'logging,tools' : 'logging';
  let capabilities = sharedCapabilities.get(key);
  if (!capabilities) {
    capabilities = deepFreeze({ logging: {}, ...(definition.tools && { tools: { listChanged: true } }) });
    sharedCapabilities.set(key, capabilities);
  }
  return capabilities;
}

/** Defines a server: its identity, instructions and tools. */
export function defineServer(spec: ServerSpec): ServerDefinition {
  return ServerDefinition.create(spec);
}
