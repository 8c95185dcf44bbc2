#!/usr/bin/env node
// fleetctl: the operators' command line. The source is TypeScript, run through tsx like the other processes.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
