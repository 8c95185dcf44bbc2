import { describeFailure } from './exit-codes.js';
import { buildProgram } from './program.js';

const program = buildProgram();
let code: number;
try {
  await program.parseAsync(process.argv);
  code = 0;
} catch (err) {
  const failure = describeFailure(err);
  for (const line of failure.lines) process.stderr.write(line + '\n');
  code = failure.code;
}
// Exit once stdout is flushed (a pipe may still hold megabytes of a list), without waiting for an event stream or
// a timer left open.
await Promise.all([process.stdout, process.stderr].map((s) => new Promise((resolve) => s.write('', resolve))));
process.exit(code);
