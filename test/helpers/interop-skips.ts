/**
 * The skip table of the interop suite (test/helpers/interop.ts): every combination of a case that does not
 * run, with its reason in its title. A skip applies to the runs its `when` accepts; the runner refuses one
 * that names no case or matches no run.
 */
import { isAtLeast } from '../../lib/protocol/versions';
import type { InteropSkip } from './interop';

export const INTEROP_SKIPS: InteropSkip[] = [
  // ---- a claim about one side only -------------------------------------------------------------------
  {
    when: ({ ours }) => ours === 'server',
    reason: 'timeouts and the pending-call table belong to the caller, here the SDK client',
    tests: [
      'forgets the cancelled call',
      'times out a call the server never answers, once its budget has passed',
      'tells the server when a call timed out',
      'enforces maxTotalTimeout even with resetTimeoutOnProgress',
    ],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: "what the SDK server sends after a cancel is the SDK's; our client's side is 'forgets the cancelled call'",
    tests: ['sends no response to a cancelled request'],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: "what the SDK McpServer answers an unknown tool with is the SDK's (the client's own case)",
    tests: ['answers an unknown tool with a -32602 error'],
  },
  {
    when: ({ ours }) => ours === 'server',
    reason: "our server answers an unknown tool with -32602 (the server's own case)",
    tests: ["reads the SDK server's answer to an unknown tool"],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: "the behaviour of our server: the handlers of the SDK McpServer are the SDK's",
    tests: [
      'turns a throwing handler into an isError result with its message',
      'delivers every progress of a burst sent right before the result, in order',
    ],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: "the related request id is what our server's sends hand the SDK transport",
    tests: [
      'sends a request to the client from inside a tool call, related to that call',
      'hands the SDK transport the request each progress and result belongs to',
    ],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: 'the SDK McpServer does not page its lists',
    tests: ['pages tools/list when there are more tools than the page size'],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason:
      "the SDK server's filtering by level is checked by 'sends only the log messages at or above the level the client set'",
    tests: ['sends every level once the client lowers its level to debug'],
  },
  {
    when: ({ ours }) => ours === 'server',
    reason: "logs$ is our client's stream",
    tests: ['delivers the log messages at or above the level set on logs$, from inside and outside a tool'],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: 'the SDK McpServer of the suite has no such resource, prompt or completer',
    tests: [
      'reads a resource of several contents',
      'gets a prompt without arguments, with its description',
      'answers the completion of an unknown prompt argument with -32602',
      'hands the completer the arguments already chosen',
    ],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: "the suite's SDK server accepts a subscription to any URI (its handler is the fixture's)",
    tests: ['refuses a subscription to an unknown URI with -32002'],
  },
  {
    when: ({ ours }) => ours === 'server',
    reason: 'our server declares resources.subscribe whenever it has resources',
    tests: ['refuses locally to subscribe when the server does not declare resources.subscribe'],
  },
  {
    when: ({ ours }) => ours === 'server',
    reason: "the list caches are our client's",
    tests: ['refreshes its resource and prompt caches on list_changed'],
  },
  {
    when: ({ ours }) => ours === 'server',
    reason: "our server's side is in 'sends resources/updated for the subscribed URIs only' (notes://alpha)",
    tests: ['subscribes to a URI of a resource template'],
  },
  {
    when: ({ ours }) => ours === 'server',
    reason:
      "the answer is the SDK client's: our server passes whatever it is (see 'elicits a form through the client')",
    tests: ['passes a declined form through as is'],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: "sending an elicitation completion is the server's",
    tests: ['refuses to send an elicitation completion'],
  },
  {
    when: ({ ours }) => ours === 'server',
    reason: "every case reaches our server through fromSdkTransport over the SDK's in-memory pair",
    tests: ["connects through fromSdkTransport over the SDK's in-memory pair"],
  },
  // ---- a feature the revision lacks -----------------------------------------------------------------
  {
    when: ({ version }) => !isAtLeast(version, '2025-06-18'),
    reason: 'context.arguments for completion arrived in 2025-06-18',
    tests: ['hands the completer the arguments already chosen'],
  },
  {
    when: ({ version }) => !isAtLeast(version, '2025-06-18'),
    reason: 'form elicitation arrived in 2025-06-18',
    tests: ['elicits a form through the client', 'passes a declined form through as is'],
  },
  {
    when: ({ version }) => isAtLeast(version, '2025-06-18'),
    reason: 'this revision has form elicitation',
    tests: ['refuses form elicitation without sending it'],
  },
  {
    when: ({ ours, version }) => ours === 'client' && !isAtLeast(version, '2025-06-18'),
    reason:
      'before 2025-06-18 our client declares no elicitation, so the SDK server refuses locally: nothing of ours runs',
    tests: ['refuses form elicitation without sending it'],
  },
  {
    when: ({ version }) => !isAtLeast(version, '2025-11-25'),
    reason: 'URL elicitation arrived in 2025-11-25',
    tests: [
      'elicits through a URL',
      "delivers a URL elicitation's completion",
      'carries a -32042 error with the URL elicitations it needs',
    ],
  },
  {
    when: ({ version }) => isAtLeast(version, '2025-11-25'),
    reason: 'this revision has URL elicitation',
    tests: [
      'refuses URL elicitation without sending it, even to a client that declared it',
      'refuses to send an elicitation completion',
    ],
  },
  {
    when: ({ ours, version }) => ours === 'client' && !isAtLeast(version, '2025-06-18'),
    reason: 'no elicitation at all before 2025-06-18: the SDK server refuses locally, nothing of ours runs',
    tests: ['refuses URL elicitation without sending it, even to a client that declared it'],
  },
  // ---- what the stateless revision or SDK v2's server does differently -------------------------------
  {
    when: ({ ours, era }) => ours === 'client' && era === 'stateless',
    reason:
      'no -32042 in 2026-07-28: SDK v2 answers a thrown UrlElicitationRequiredError with -32603 and points to inputRequired.elicitUrl',
    tests: ['carries a -32042 error with the URL elicitations it needs'],
  },
  {
    when: ({ ours, era }) => ours === 'client' && era === 'stateless',
    reason:
      "2026-07-28 has no log message outside a request; the level the request names is checked by 'sends the log messages at or above the level the request names in its _meta'",
    tests: ['delivers the log messages at or above the level set on logs$, from inside and outside a tool'],
  },
  {
    when: ({ ours }) => ours === 'client',
    reason: "the suite's SDK servers have no tool that asks twice (our client's rounds: test/client/input-required*)",
    tests: [
      'answers two input requests of one round, then retries once',
      'goes through two rounds, echoing the requestState each time',
    ],
  },
];
