/**
 * The connections a deployment may open to Postgres at its largest, against what the server and
 * PgBouncer accept (docs/operations.md#connection-budget):
 *
 * - server side, against the Cluster's `max_connections`: the Pooler's server connections
 *   (instances × users × (default_pool_size + reserve_pool_size): PgBouncer keeps a pool per
 *   database and user, and each plane connects as its own role), the direct connections of each
 *   replica of each service (none today), the migration Job's (the advisory lock's session
 *   and the runner's), and what is reserved for superusers, the operator and its exporter;
 * - client side, against each PgBouncer's `max_client_conn`: every replica's pool
 *   (DATABASE_POOL_SIZE), all on one PgBouncer instance at worst (the Service does not balance
 *   connections evenly).
 *
 * Every replica count is the autoscaler's maximum.
 */
export type BudgetInput = {
  maxConnections: number;
  /** superuser_reserved_connections (PostgreSQL's default: 3). */
  superuserReserved: number;
  /** The operator's instance manager, the exporter and a backup in progress. */
  operatorReserved: number;
  pooler: {
    instances: number;
    /** The database users that connect through it: one pool each per instance. */
    users: number;
    defaultPoolSize: number;
    reservePoolSize: number;
    maxClientConn: number;
  };
  /** Each service: its maximum replicas, its pool, the direct connections of each replica. */
  services: { name: string; maxReplicas: number; poolSize: number; directPerReplica: number }[];
  /** Migration Jobs that may run at once, and the connections each holds. */
  migrations: { jobs: number; connectionsPerJob: number };
};

export type Budget = {
  server: {
    used: number;
    limit: number;
    parts: { pooler: number; direct: number; migrations: number; reserved: number };
  };
  client: { used: number; limit: number };
  problems: string[];
};

export function connectionBudget(input: BudgetInput): Budget {
  const pooler =
    input.pooler.instances *
    input.pooler.users *
    (input.pooler.defaultPoolSize + input.pooler.reservePoolSize);
  const direct = input.services.reduce((sum, each) => sum + each.maxReplicas * each.directPerReplica, 0);
  const migrations = input.migrations.jobs * input.migrations.connectionsPerJob;
  const reserved = input.superuserReserved + input.operatorReserved;
  const parts = { pooler, direct, migrations, reserved };
  const serverUsed = pooler + direct + migrations + reserved;
  const clientUsed = input.services.reduce((sum, each) => sum + each.maxReplicas * each.poolSize, 0);
  const problems: string[] = [];
  if (serverUsed > input.maxConnections) {
    problems.push(
      `Postgres: ${serverUsed} connections at the autoscalers' maximum (${JSON.stringify(parts)}) > max_connections ${input.maxConnections}`,
    );
  }
  if (clientUsed > input.pooler.maxClientConn) {
    problems.push(
      `PgBouncer: ${clientUsed} client connections > max_client_conn ${input.pooler.maxClientConn}`,
    );
  }
  return {
    server: { used: serverUsed, limit: input.maxConnections, parts },
    client: { used: clientUsed, limit: input.pooler.maxClientConn },
    problems,
  };
}
