/**
 * A notes server: each note is a resource, `notes://index` lists them (subscribe to it to hear about new
 * notes), `notes://tags/{tag}` gathers the notes with a tag (tags complete), the `summarize` prompt asks a
 * model about one note, and the `add_note` tool adds one (every client gets `resources/list_changed`).
 *
 * The default export is a `Server`, not a definition, because `add_note` changes the server's resources.
 */
import { Subject } from 'rxjs';
import { defineServer, ErrorCode, McpError, Server, type ResourceDefinition } from '../lib/index';

interface Note {
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly tags: readonly string[];
}

const notes = new Map<string, Note>(
  [
    { id: 'welcome', title: 'Welcome', body: 'Notes live in memory while the server runs.', tags: ['meta'] },
    { id: 'groceries', title: 'Groceries', body: '- oat milk\n- lemons\n- rye bread', tags: ['home', 'todo'] },
    { id: 'mcp', title: 'MCP ideas', body: 'Subscribe to notes://index, then add a note.', tags: ['todo', 'work'] },
  ].map((note) => [note.id, note]),
);
const indexChanged = new Subject<void>();

const render = (note: Note) => `# ${note.title}\n\n${note.body}\n\ntags: ${note.tags.join(', ')}\n`;
const allTags = () => [...new Set([...notes.values()].flatMap((note) => note.tags))].sort();
const startingWith = (typed: string, values: readonly string[]) => values.filter((value) => value.startsWith(typed));

function noteResource(note: Note): ResourceDefinition {
  return {
    uri: `notes://${note.id}`,
    name: note.id,
    title: note.title,
    mimeType: 'text/markdown',
    read: () => render(note),
  };
}

function slug(title: string): string {
  const base =
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'note';
  let id = base;
  for (let n = 2; notes.has(id); n++) id = `${base}-${n}`;
  return id;
}

const server = new Server(
  defineServer({
    name: 'demo-notes',
    version: '1.0.0',
    instructions: 'Read notes as resources; add one with add_note.',
    resources: [
      {
        uri: 'notes://index',
        name: 'index',
        title: 'All notes',
        mimeType: 'text/markdown',
        read: () => [...notes.values()].map((note) => `- [${note.title}](notes://${note.id})`).join('\n'),
        updates: indexChanged,
      },
      ...[...notes.values()].map(noteResource),
    ],
    resourceTemplates: [
      {
        uriTemplate: 'notes://tags/{tag}',
        name: 'tag',
        title: 'Notes with a tag',
        mimeType: 'text/markdown',
        read: ({ tag }) => {
          const tagged = [...notes.values()].filter((note) => note.tags.includes(tag as string));
          if (tagged.length === 0)
            throw new McpError(ErrorCode.ResourceNotFound, `No note has the tag ${tag}`, {
              uri: `notes://tags/${tag}`,
            });
          return tagged.map(render).join('\n---\n');
        },
        complete: { tag: (typed) => startingWith(typed, allTags()) },
      },
    ],
    prompts: [
      {
        name: 'summarize',
        title: 'Summarize a note',
        arguments: [{ name: 'id', description: 'The note to summarize', required: true }],
        get: ({ id }) => {
          const note = notes.get(id!);
          if (!note) throw new McpError(ErrorCode.InvalidParams, `No note named ${id}`);
          return [
            { role: 'user', content: { type: 'text', text: 'Summarize this note in one sentence.' } },
            { role: 'user', content: { type: 'resource', resource: { uri: `notes://${id}`, text: render(note) } } },
          ];
        },
        complete: { id: (typed) => startingWith(typed, [...notes.keys()]) },
      },
    ],
    tools: [
      {
        name: 'add_note',
        title: 'Add a note',
        inputSchema: {
          type: 'object',
          properties: {
            title: { type: 'string', minLength: 1, maxLength: 200 },
            body: { type: 'string', maxLength: 10_000 },
            tags: { type: 'array', items: { type: 'string', pattern: '^[a-z0-9-]{1,32}$' }, maxItems: 10 },
          },
          required: ['title', 'body'],
        },
        handler: ({ title, body, tags }) => {
          const note: Note = { id: slug(title), title, body, tags: tags ?? [] };
          notes.set(note.id, note);
          server.update((current) => current.withResources(noteResource(note)));
          indexChanged.next();
          return {
            content: [
              { type: 'text', text: `Added ${note.title}` },
              { type: 'resource_link', uri: `notes://${note.id}`, name: note.id, mimeType: 'text/markdown' },
            ],
          };
        },
      },
    ],
  }),
);

export default server;
