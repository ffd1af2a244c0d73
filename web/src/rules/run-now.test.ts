import { describe, expect, it } from 'vitest';
import { initialForm, runBody, type RunFields } from './run-now';

const fields: RunFields = {
  fields: ['HostName', 'AlarmName'],
  payload: { HostName: 'web-1', MetaData: { Service: 'nginx', Region: 'eu' } },
  actionVariables: ['Service', 'HostName', 'Queue'],
  lastEventId: null,
  eventsRead: 2,
};

describe('the Run now form', () => {
  it('starts from the last events, then the names the action reads that no event gave', () => {
    expect(initialForm(fields)).toEqual({
      HostName: 'web-1',
      AlarmName: '',
      metaData: [{ key: 'Service', value: 'nginx' }, { key: 'Region', value: 'eu' }, { key: 'Queue', value: '' }],
      dryRun: false,
    });
  });

  it('sends the fields filled in and the rows with a key; a dry run is act false', () => {
    const form = { HostName: ' web-2 ', AlarmName: '', metaData: [{ key: 'Service', value: '' }, { key: ' ', value: 'lost' }, { key: 'Queue', value: 'q 1' }], dryRun: true };
    expect(runBody(form, fields.fields)).toEqual({ payload: { HostName: 'web-2', MetaData: { Service: '', Queue: 'q 1' } }, act: false });
    expect(runBody({ ...form, metaData: [], dryRun: false }, [])).toEqual({ payload: {}, act: true });
  });
});
