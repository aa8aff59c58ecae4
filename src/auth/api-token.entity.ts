import { Entity, Enum, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { registerEnumType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { Workspace } from '../workspaces/workspace.entity.js';

export enum Role {
  ADMIN = 'ADMIN',
  OPERATOR = 'OPERATOR',
  /** Bound to one workspace. */
  CUSTOMER = 'CUSTOMER',
  /** The conversation runtime: opens turns and calls tools. */
  RUNTIME = 'RUNTIME',
}
registerEnumType(Role, { name: 'Role' });

/** An opaque API token, stored as its SHA-256 hash only. */
@Entity({ tableName: 'api_token' })
export class ApiToken {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'string', length: 64, unique: true, hidden: true })
  tokenHash: string;

  @Enum({ items: () => Role })
  role: Role;

  @ManyToOne(() => Workspace, { ref: true, nullable: true, deleteRule: 'cascade' })
  workspace: Ref<Workspace> | null;

  @Property({ type: 'string', length: 200 })
  label: string;

  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  @Property({ type: 'datetime', nullable: true })
  revokedAt: Date | null = null;

  constructor(tokenHash: string, role: Role, workspace: Ref<Workspace> | null, label: string) {
    this.tokenHash = tokenHash;
    this.role = role;
    this.workspace = workspace;
    this.label = label;
  }
}
