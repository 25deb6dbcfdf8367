/** What the Streamable HTTP client transport reports doing on its own (its `events`). */
export type HttpClientEvent =
  | { type: 'session-renewed'; previousSessionId: string; sessionId: string }
  | { type: 'fallback'; to: 'legacy-sse'; status: number }
  | { type: 'reconnecting'; stream: 'standalone' | 'request'; attempt: number; delayMs: number; lastEventId?: string }
  | { type: 'stream-lost'; stream: 'standalone' | 'request'; error: string };
