import { Field, ObjectType } from 'type-graphql';

/** Something the caller can fix: which input field, what is wrong, and a stable code. */
@ObjectType()
export class UserError {
  @Field(() => [String], {
    description: 'Path to the input field, such as ["input", "credential", "headerName"].',
  })
  field: string[];

  @Field(() => String)
  message: string;

  @Field(() => String)
  code: string;

  constructor(field: string[], message: string, code: string) {
    this.field = field;
    this.message = message;
    this.code = code;
  }
}
