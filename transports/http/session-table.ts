/**
 * The sessions of one HTTP handler, by id and by client, with the rule that keeps the table fair: a client
 * over its quota makes room from its own idle sessions, and a full table makes room by evicting the least
 * recently used idle session of the client holding the most. Nobody is refused while someone else idles;
 * a client whose own sessions are all busy gets 429, a table of busy sessions 503.
 */

/** What the table needs of a session. */
export interface TableSession {
  readonly sessionId: string;
  /** False while the session has an open request or stream: it is never evicted then. */
  readonly idle: boolean;
  /** How long it has been idle (ms). */
  idleForMs(): number;
  /** Ends the session for good (it answers 404 from now on); it leaves the table as it does. */
  evict(): void;
}

export interface SessionQuota {
  readonly maxSessions: number;
  readonly maxSessionsPerClient: number;
}

export interface Refusal {
  readonly status: 429 | 503;
  readonly message: string;
}

export class SessionTable<S extends TableSession> {
  private readonly byId = new Map<string, S>();
  private readonly byClient = new Map<string, Set<S>>();
  private readonly clientOf = new Map<S, string>();
  /** Evicted sessions still releasing: `closeAll` waits for them too. */
  private readonly leaving = new Set<S>();

  constructor(private readonly quota: SessionQuota) {}

  get size(): number {
    return this.byId.size;
  }

  get(sessionId: string): S | undefined {
    return this.byId.get(sessionId);
  }

  /** Every session, evicted ones still releasing included. */
  all(): S[] {
    return [...this.byId.values(), ...this.leaving];
  }

  /** Sessions `client` holds. */
  countOf(client: string): number {
    return this.byClient.get(client)?.size ?? 0;
  }

  /**
   * Makes room for one more session of `client`, evicting idle sessions as the rule says; the refusal
   * when there is none to evict.
   */
  makeRoom(client: string): Refusal | undefined {
    const own = this.byClient.get(client);
    if (own && own.size >= this.quota.maxSessionsPerClient) {
      const victim = longestIdle(own);
      if (!victim) {
        return {
          status: 429,
          message: `Too Many Requests: this client holds ${own.size} sessions (the limit), all busy; end one with DELETE`,
        };
      }
      this.evict(victim);
    }
    if (this.byId.size < this.quota.maxSessions) return undefined;
    const victim = this.victimForNewcomer();
    if (!victim) return { status: 503, message: 'Service Unavailable: every session is busy; try again later' };
    this.evict(victim);
    return undefined;
  }

  add(session: S, client: string): void {
    this.byId.set(session.sessionId, session);
    this.clientOf.set(session, client);
    let own = this.byClient.get(client);
    if (!own) this.byClient.set(client, (own = new Set()));
    own.add(session);
  }

  /** Forgets `session` (idempotent). */
  remove(session: S): void {
    this.leaving.delete(session);
    const client = this.clientOf.get(session);
    if (client === undefined) return;
    this.clientOf.delete(session);
    if (this.byId.get(session.sessionId) === session) this.byId.delete(session.sessionId);
    const own = this.byClient.get(client)!;
    own.delete(session);
    if (own.size === 0) this.byClient.delete(client);
  }

  private evict(session: S): void {
    this.remove(session);
    this.leaving.add(session);
    session.evict();
  }

  /** The longest idle session of the client with the most sessions that has an idle one. */
  private victimForNewcomer(): S | undefined {
    const clients = [...this.byClient.values()].sort((a, b) => b.size - a.size);
    for (const own of clients) {
      const victim = longestIdle(own);
      if (victim) return victim;
    }
    return undefined;
  }
}

function longestIdle<S extends TableSession>(sessions: Iterable<S>): S | undefined {
  let found: S | undefined;
  let longest = -1;
  for (const session of sessions) {
    if (!session.idle) continue;
    const idleFor = session.idleForMs();
    if (idleFor > longest) {
      longest = idleFor;
      found = session;
    }
  }
  return found;
}
