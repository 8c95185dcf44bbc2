import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyTask, taskUriFrom } from '../src/index.js';

describe('classifyTask (RMS task state sets, docs/reference/rms-behaviours.md#redfish-task-states)', () => {
  it('pending states keep polling', () => {
    for (const s of ['New', 'Pending', 'Running', 'Service', 'Starting', 'running'])
      assert.equal(classifyTask({ TaskState: s }), 'pending', s);
  });

  it('failure states fail', () => {
    for (const s of ['Cancelled', 'Cancelling', 'Exception', 'Interrupted', 'Killed', 'Stopping', 'Suspended']) {
      assert.equal(classifyTask({ TaskState: s, TaskStatus: 'OK' }), 'failed', s);
    }
  });

  it('Completed succeeds unless its status or a message says otherwise', () => {
    assert.equal(
      classifyTask({
        TaskState: 'Completed',
        TaskStatus: 'OK',
        Messages: [{ MessageId: 'Base.1.0.Success', Severity: 'OK' }],
      }),
      'succeeded',
    );
    for (const st of ['Critical', 'Error', 'Failed', 'Failure', 'Exception'])
      assert.equal(classifyTask({ TaskState: 'Completed', TaskStatus: st }), 'failed', st);
    assert.equal(
      classifyTask({ TaskState: 'Completed', Messages: [{ MessageId: 'Base.1.13.0.TaskAborted' }] }),
      'failed',
    );
    assert.equal(
      classifyTask({ TaskState: 'Completed', Messages: [{ MessageId: 'Update.1.0.VerificationFailed' }] }),
      'failed',
    );
    assert.equal(
      classifyTask({ TaskState: 'Completed', Messages: [{ MessageId: 'Oem.1.0.PolicyViolation' }] }),
      'failed',
    );
    assert.equal(
      classifyTask({
        TaskState: 'Completed',
        Messages: [{ MessageId: 'Base.1.0.InternalError', Severity: 'Critical' }],
      }),
      'failed',
    );
    assert.equal(classifyTask({ TaskState: 'Completed', Messages: [{ MessageSeverity: 'Error' }] }), 'failed');
  });

  it('"NoError" is not an error', () => {
    assert.equal(
      classifyTask({ TaskState: 'Completed', Messages: [{ MessageId: 'Oem.1.0.NoError', Severity: 'OK' }] }),
      'succeeded',
    );
  });

  it('a running task with a warning message is still pending', () => {
    assert.equal(classifyTask({ TaskState: 'Running', Messages: [{ MessageId: 'Base.1.0.TaskAborted' }] }), 'pending');
  });
});

describe('taskUriFrom', () => {
  it('reads the task from the body, the Location header, or message arguments', () => {
    assert.equal(
      taskUriFrom({ headers: {}, body: { '@odata.id': '/redfish/v1/TaskService/Tasks/7', Id: '7' } }),
      '/redfish/v1/TaskService/Tasks/7',
    );
    assert.equal(
      taskUriFrom({
        headers: { location: 'https://10.0.0.5/redfish/v1/TaskService/Tasks/HGX_0/Monitor?x=1' },
        body: undefined,
      }),
      '/redfish/v1/TaskService/Tasks/HGX_0',
    );
    assert.equal(
      taskUriFrom({ headers: { location: '/redfish/v1/TaskService/TaskMonitors/abc' }, body: {} }),
      '/redfish/v1/TaskService/TaskMonitors/abc',
    );
    assert.equal(
      taskUriFrom({
        headers: {},
        body: { Messages: [{ MessageId: 'Task.1.0.New', MessageArgs: ['/redfish/v1/TaskService/Tasks/3'] }] },
      }),
      '/redfish/v1/TaskService/Tasks/3',
    );
  });

  it('ignores URIs that are not tasks', () => {
    assert.equal(
      taskUriFrom({
        headers: { location: '/redfish/v1/UpdateService' },
        body: { '@odata.id': '/redfish/v1/UpdateService' },
      }),
      undefined,
    );
  });
});
