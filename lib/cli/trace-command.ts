/** `switchboard trace check|export|view`: each action loaded only when run. */
import type { CliIo } from './io';
import type { TraceCommand } from './trace-args';

export async function trace(command: TraceCommand, io: CliIo): Promise<number> {
  switch (command.action) {
    case 'check':
      return (await import('./trace-check')).traceCheck(command, io);
    case 'export':
      return (await import('./trace-export')).traceExport(command, io);
    case 'view':
      return (await import('./trace-view')).runTraceView(command.args, io);
  }
}
