import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('hosts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('hostname', 'text', (c) => c.notNull())
    // Host names are case-insensitive (RFC 4343); matching uses the lowercase form.
    .addColumn('hostname_key', 'text', (c) => c.notNull())
    // Effective tags = the agent's --tags (agent_tags) plus those added in pitcrew (managed_tags).
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('agent_tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('managed_tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('os', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('arch', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('agent_version', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('enrolled_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint')
    .addColumn('session_id', 'text')
    .addColumn('node_id', 'text')
    .execute();
  await db.schema.createIndex('hosts_tenant_hostname').on('hosts').columns(['tenant_id', 'hostname_key']).unique().execute();

  await db.schema
    .createTable('host_tags')
    .addColumn('host_id', 'text', (c) => c.notNull().references('hosts.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('host_tags_pk', ['host_id', 'tag'])
    .execute();
  await db.schema.createIndex('host_tags_tenant_tag').on('host_tags').columns(['tenant_id', 'tag']).execute();

  await db.schema
    .createTable('executions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('rule_id', 'text', (c) => c.notNull().references('rules.id'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
    .addColumn('host_id', 'text', (c) => c.references('hosts.id'))
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('exit_code', 'integer')
    .addColumn('signal', 'text')
    .addColumn('stdout', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('stderr', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('stdout_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stderr_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('queued_at', 'bigint', (c) => c.notNull())
    .addColumn('dispatched_at', 'bigint')
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('node_id', 'text')
    .addColumn('cancel_requested_at', 'bigint')
    .addColumn('late_result', 'text')
    .execute();
  await db.schema.createIndex('executions_tenant').on('executions').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('executions_host_state').on('executions').columns(['host_id', 'state']).execute();
  await db.schema.createIndex('executions_state_expiry').on('executions').columns(['state', 'expires_at']).execute();
  await db.schema.createIndex('executions_event').on('executions').columns(['event_id']).execute();
  await db.schema.createIndex('executions_rule').on('executions').columns(['rule_id', 'id']).execute();

  await db.schema
    .createTable('execution_transitions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('execution_id', 'text', (c) => c.notNull().references('executions.id'))
    .addColumn('from_state', 'text')
    .addColumn('to_state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('execution_transitions_execution').on('execution_transitions').columns(['execution_id', 'id']).execute();

  await db.schema
    .createTable('execution_artifacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('execution_id', 'text', (c) => c.notNull().references('executions.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull()) // base64: portable across both databases
    .execute();
  await db.schema.createIndex('execution_artifacts_execution').on('execution_artifacts').columns(['execution_id']).execute();

  await db.schema
    .createTable('nodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['nodes', 'execution_artifacts', 'execution_transitions', 'executions', 'host_tags', 'hosts']) {
    await db.schema.dropTable(table).execute();
  }
}
