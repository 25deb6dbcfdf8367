/** Where the CLI writes: whole lines to stdout (results, banners) and stderr (errors, traces, logs). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

export const processIo: CliIo = {
  out: (line) => void process.stdout.write(line + '\n'),
  err: (line) => void process.stderr.write(line + '\n'),
};
