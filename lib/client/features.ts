/**
 * The client features a server calls (sampling, elicitation, roots): the handlers the application gives,
 * the capabilities they declare, and the request handlers that answer the server. A feature without a
 * handler is not declared, and its method then gets -32601.
 */
import type { ConnectionState } from '../../machines/connection';
import type { RequestHandler } from '../core/connection';
import type { RequestContext, RequestHost } from '../core/request-context';
import type { JsonObject } from '../jsonrpc/types';
import type {
  CreateMessageParams,
  CreateMessageResult,
  ElicitFormParams,
  ElicitResult,
  ElicitUrlParams,
  Root,
} from '../protocol/client-features';
import { shape, shapeContentList } from '../protocol/shape';
import type { ClientCapabilities, ContentBlock, Implementation, ServerCapabilities } from '../protocol/types';
import { namesModernRevision } from '../protocol/modern';
import { isAtLeast } from '../protocol/versions';
import { applyDefaults, checkElicitResult, parseElicitParams, type ElicitationDeclared } from './elicitation';
import { checkRoots } from './roots';
import { checkCreateMessageParams, checkCreateMessageResult } from './sampling';

/** The client's side of its connection, as the handlers of the client features see it. `Client` implements it. */
export interface ClientHost extends RequestHost {
  readonly role: 'client';
  readonly state: ConnectionState;
  /** What the server answered `initialize` with (undefined before). */
  readonly serverInfo: Implementation | undefined;
  readonly serverCapabilities: ServerCapabilities | undefined;
}

/** The context of a request the server sent to the client (sampling, elicitation, roots). */
export type ClientContext = RequestContext<ClientHost>;

/** The methods a server calls on the client features. */
export type FeatureMethod = 'sampling/createMessage' | 'elicitation/create' | 'roots/list';

/** Answers `sampling/createMessage`: runs the model the application chose. */
export type SamplingHandler = (
  params: CreateMessageParams,
  context: ClientContext,
) => CreateMessageResult | Promise<CreateMessageResult>;

export interface SamplingOptions {
  readonly handler: SamplingHandler;
  /** Declares `sampling.tools`: the server may offer tools to the model (2025-11-25). */
  readonly tools?: boolean;
  /** Declares `sampling.context`: the server may ask for context from other servers. */
  readonly context?: boolean;
}

export type FormElicitationHandler = (
  params: ElicitFormParams,
  context: ClientContext,
) => ElicitResult | Promise<ElicitResult>;
export type UrlElicitationHandler = (
  params: ElicitUrlParams,
  context: ClientContext,
) => ElicitResult | Promise<ElicitResult>;

export interface ElicitationOptions {
  /** Asks the user to fill in a form (declares `elicitation.form`). */
  readonly form?: FormElicitationHandler;
  /** Asks the user's consent to open a URL (declares `elicitation.url`, 2025-11-25). */
  readonly url?: UrlElicitationHandler;
  /** Fill in the schema's defaults for fields an accepted form left out (default true). */
  readonly applyDefaults?: boolean;
}

export interface ClientFeatureOptions {
  readonly sampling?: SamplingHandler | SamplingOptions;
  readonly elicitation?: ElicitationOptions;
  /** The roots offered to the server (declares `roots` with `listChanged`); change them with `setRoots`. */
  readonly roots?: readonly Root[];
}

const NO_CAPABILITIES: ClientCapabilities = Object.freeze({});

/** A client's feature handlers, what they declare, and the request handlers that answer the server with them. */
export class ClientFeatures {
  readonly sampling: SamplingOptions | undefined;
  readonly elicitation: ElicitationOptions | undefined;
  roots: readonly Root[] | undefined;

  constructor(options: ClientFeatureOptions) {
    this.sampling = typeof options.sampling === 'function' ? { handler: options.sampling } : options.sampling;
    const elicitation = options.elicitation;
    this.elicitation = elicitation && (elicitation.form || elicitation.url) ? elicitation : undefined;
    this.roots = options.roots && checkRoots(options.roots);
  }

  /** The request handlers of these features, by method: they read this object, never the connection. */
  requestHandlers(): Record<FeatureMethod, RequestHandler<ClientHost>> {
    return {
      'sampling/createMessage': (context, params) => createMessage(this, context, params),
      'elicitation/create': (context, params) => elicit(this, context, params),
      'roots/list': (context) => listRoots(this, context),
    };
  }

  /**
   * `extra` (experimental and the like) plus what the handlers declare, as revision `version` knows it:
   * elicitation exists from 2025-06-18 (form only, as `{}`), its modes and sampling's tools and context
   * from 2025-11-25. The feature keys come from the handlers only.
   */
  capabilities(extra: ClientCapabilities | undefined, version: string): ClientCapabilities {
    if (!extra && !this.sampling && !this.elicitation && !this.roots) return NO_CAPABILITIES;
    const { sampling: _sampling, elicitation: _elicitation, roots: _roots, ...rest } = extra ?? {};
    return {
      ...rest,
      ...(this.sampling && { sampling: samplingCapability(this.samplingDeclared(version)) }),
      ...this.elicitationCapability(version),
      ...(this.roots && { roots: { listChanged: true } }),
    };
  }

  /** What sampling may use at `version`. */
  samplingDeclared(version: string): { tools: boolean; context: boolean } {
    const modern = isAtLeast(version, '2025-11-25');
    return { tools: modern && !!this.sampling?.tools, context: modern && !!this.sampling?.context };
  }

  /** Which elicitation modes this client serves at `version`. */
  elicitationDeclared(version: string): ElicitationDeclared {
    const elicitation = this.elicitation;
    if (!elicitation || !isAtLeast(version, '2025-06-18')) return { form: false, url: false };
    const url = !!elicitation.url && isAtLeast(version, '2025-11-25');
    return { form: !!elicitation.form, url, ...(url && namesModernRevision(version) && { urlWithoutId: true }) };
  }

  private elicitationCapability(version: string): ClientCapabilities {
    const { form, url } = this.elicitationDeclared(version);
    if (!form && !url) return {};
    if (!isAtLeast(version, '2025-11-25')) return { elicitation: {} };
    return { elicitation: { ...(form && { form: {} }), ...(url && { url: {} }) } };
  }
}

function samplingCapability(declared: { tools: boolean; context: boolean }): object {
  return { ...(declared.context && { context: {} }), ...(declared.tools && { tools: {} }) };
}

async function createMessage(
  features: ClientFeatures,
  context: ClientContext,
  params: JsonObject | undefined,
): Promise<CreateMessageResult> {
  const sampling = features.sampling!;
  const request = checkCreateMessageParams(params, features.samplingDeclared(context.protocolVersion!));
  const result = checkCreateMessageResult(await sampling.handler(request, context), request);
  return shapeSamplingResult(result, context.protocolVersion!);
}

async function elicit(
  features: ClientFeatures,
  context: ClientContext,
  params: JsonObject | undefined,
): Promise<ElicitResult> {
  const elicitation = features.elicitation!;
  const request = parseElicitParams(params, features.elicitationDeclared(context.protocolVersion!));
  let answer =
    request.mode === 'url' ? await elicitation.url!(request, context) : await elicitation.form!(request, context);
  if (request.mode !== 'url' && answer?.action === 'accept' && elicitation.applyDefaults !== false) {
    answer = { ...answer, content: applyDefaults(request.requestedSchema, answer.content) as ElicitResult['content'] };
  }
  return checkElicitResult(answer, request);
}

function listRoots(features: ClientFeatures, context: ClientContext): { roots: readonly Root[] } {
  const version = context.protocolVersion!;
  return { roots: (features.roots ?? []).map((root) => shape('Root', root, version)) };
}

/**
 * A sampling result for `version`: before 2025-11-25 content is one block (a one-block array is unwrapped),
 * and every block must exist in that revision.
 */
function shapeSamplingResult(result: CreateMessageResult, version: string): CreateMessageResult {
  // The newest revision carries every block type, tool use included, and arrays of blocks.
  if (isAtLeast(version, '2025-11-25')) return result;
  const blocks = (Array.isArray(result.content) ? result.content : [result.content]) as ContentBlock[];
  if (blocks.length !== 1) {
    throw new TypeError(
      `The sampling handler returned ${blocks.length} content blocks; protocol ${version} carries exactly one`,
    );
  }
  const shaped = shapeContentList(blocks, version);
  if ('refusal' in shaped) throw new TypeError(`The sampling handler returned ${shaped.refusal}`);
  const content = shaped.content[0]!;
  return content === result.content ? result : ({ ...result, content } as CreateMessageResult);
}
