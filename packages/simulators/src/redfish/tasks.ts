import { message, type RedfishMessage } from './messages.js';

export type TaskState = 'New' | 'Running' | 'Completed' | 'Exception' | 'Interrupted';

export interface Task {
  id: string;
  name: string;
  state: TaskState;
  status: 'OK' | 'Warning' | 'Critical';
  percent: number;
  messages: RedfishMessage[];
  startTime: string;
  endTime?: string;
  /** The step timer of a running task; cleared when the task ends. */
  timer?: NodeJS.Timeout;
}

const KEEP = 32;

/**
 * The TaskService of one BMC: numbered tasks, oldest finished ones overwritten (CompletedTaskOverWritePolicy Oldest).
 */
export class TaskStore {
  readonly byId = new Map<string, Task>();
  private seq = 0;

  create(name: string): Task {
    const task: Task = {
      id: String(this.seq++),
      name,
      state: 'New',
      status: 'OK',
      percent: 0,
      messages: [],
      startTime: new Date().toISOString(),
    };
    this.byId.set(task.id, task);
    for (const [id, t] of this.byId) {
      if (this.byId.size <= KEEP) break;
      if (!isRunning(t)) this.byId.delete(id);
    }
    return task;
  }

  running(): Task[] {
    return [...this.byId.values()].filter(isRunning);
  }

  /** Ends every running task, e.g. because the BMC rebooted under it. */
  interruptAll(): void {
    for (const t of this.running()) end(t, 'Interrupted', 'Critical', [message('TaskEvent', 'TaskAborted', [t.id])]);
  }

  stop(): void {
    for (const t of this.byId.values()) clearTimeout(t.timer);
  }
}

export const isRunning = (t: Task): boolean => t.state === 'New' || t.state === 'Running';

export function end(task: Task, state: TaskState, status: Task['status'], messages: RedfishMessage[]): void {
  clearTimeout(task.timer);
  delete task.timer;
  task.state = state;
  task.status = status;
  task.messages.push(...messages);
  task.endTime = new Date().toISOString();
}

export function taskBody(task: Task): Record<string, unknown> {
  return {
    '@odata.id': `/redfish/v1/TaskService/Tasks/${task.id}`,
    '@odata.type': '#Task.v1_7_4.Task',
    Id: task.id,
    Name: task.name,
    TaskState: task.state,
    TaskStatus: task.status,
    PercentComplete: task.percent,
    StartTime: task.startTime,
    ...(task.endTime ? { EndTime: task.endTime } : {}),
    Messages: task.messages,
  };
}
