import type { Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import type { Runtime } from '../runtime.js';
import { examples } from './options.js';

/** Words a command's positional arguments take, beyond IDs (which completion cannot know). */
const argumentWords: Record<string, string[]> = {
  '/power': ['on', 'off', 'cycle', 'force-on', 'force-off', 'graceful-shutdown', 'graceful-restart', 'force-restart'],
  '/describe': ['device', 'rack', 'job', 'campaign'],
  '/cold-reboot': ['rack'],
  '/enrol': ['rack', 'device'],
  '/burn-in': ['device'],
  '/job/decide': ['retry', 'skip', 'reject'],
  '/firmware/update': ['device'],
  '/completion': ['bash', 'zsh'],
};

/** Every command path (`/get/devices`) with the words that may follow it: subcommands, options, argument words. */
export function completionTable(program: Command): Map<string, string[]> {
  const table = new Map<string, string[]>();
  const visit = (cmd: Command, path: string) => {
    const words = [
      ...cmd.commands.flatMap((c) => [c.name(), ...c.aliases()]),
      ...cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x))),
      ...(argumentWords[path] ?? []),
      ...(path === '/power' ? ['device', 'rack', 'site'] : []),
    ];
    table.set(path, words);
    for (const sub of cmd.commands) for (const name of [sub.name(), ...sub.aliases()]) visit(sub, `${path}/${name}`);
  };
  visit(program, '');
  table.set('', [...table.get('')!, '--context', '--help']);
  return table;
}

export function bashCompletion(program: Command): string {
  const table = completionTable(program);
  const paths = [...table.keys()].filter(Boolean);
  const cases = [...table]
    .map(([path, words]) => `    "${path}") words="${[...new Set(words)].join(' ')}" ;;`)
    .join('\n');
  return `# fleetctl completion for bash: source <(fleetctl completion bash)
_fleetctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" key="" w i words=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ $w == -* ]] && continue
    case "$key/$w" in
      ${paths.map((p) => `"${p}"`).join('|')}) key="$key/$w" ;;
    esac
  done
  case "$key" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _fleetctl fleetctl
`;
}

export function registerCompletion(program: Command, rt: Runtime): void {
  const cmd = program.command('completion <shell>').description('print a shell completion script (bash or zsh)');
  examples(cmd, 'source <(fleetctl completion bash)', 'fleetctl completion zsh > "${fpath[1]}/_fleetctl"');
  cmd.action(async (shell: string) => {
    if (shell === 'bash') return rt.out.write(bashCompletion(program));
    if (shell === 'zsh')
      return rt.out.write(
        `#compdef fleetctl\n# zsh runs the bash completion through bashcompinit\n` +
          `autoload -U +X bashcompinit && bashcompinit\n${bashCompletion(program)}`,
      );
    throw new UsageError(`completion ${shell}: expected bash or zsh`);
  });
}
