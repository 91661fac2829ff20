// assertMatches(value, schema): the JSON Schema keywords the constrained-decoding WPT
// files use, checked the way JSON Schema defines them (a testharness assertion each).

'use strict';

function assertMatches(value, schema, where = 'answer') {
  if (schema.enum) assert_true(schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)),
                               `${where} is one of the enum`);
  if (schema.const !== undefined) assert_equals(JSON.stringify(value), JSON.stringify(schema.const));
  switch (schema.type) {
    case 'boolean': assert_equals(typeof value, 'boolean', where); break;
    case 'null': assert_equals(value, null, where); break;
    case 'integer': assert_true(Number.isInteger(value), `${where} is an integer`); break;
    case 'number': assert_equals(typeof value, 'number', where); break;
    case 'string': assert_equals(typeof value, 'string', where); break;
    case 'array': assert_true(Array.isArray(value), `${where} is an array`); break;
    case 'object':
      assert_true(value !== null && typeof value === 'object' && !Array.isArray(value), where);
      break;
  }
  if (schema.minimum !== undefined) assert_greater_than_equal(value, schema.minimum, where);
  if (schema.maximum !== undefined) assert_less_than_equal(value, schema.maximum, where);
  if (schema.exclusiveMaximum !== undefined) assert_less_than(value, schema.exclusiveMaximum, where);
  if (schema.maxLength !== undefined) assert_less_than_equal([...value].length, schema.maxLength);
  if (schema.minLength !== undefined) assert_greater_than_equal([...value].length, schema.minLength);
  if (schema.pattern) assert_regexp_match(value, new RegExp(schema.pattern), where);
  if (['date', 'date-time'].includes(schema.format)) {
    assert_false(Number.isNaN(Date.parse(value)), `${where} is a ${schema.format}: ${value}`);
  }
  if (schema.minItems !== undefined) assert_greater_than_equal(value.length, schema.minItems);
  if (schema.maxItems !== undefined) assert_less_than_equal(value.length, schema.maxItems);
  if (schema.items) value.forEach((item, i) => assertMatches(item, schema.items, `${where}[${i}]`));
  for (const name of schema.required ?? []) assert_true(name in value, `${where}.${name} is there`);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (name in value) assertMatches(value[name], property, `${where}.${name}`);
  }
  if (schema.additionalProperties === false) {
    for (const name of Object.keys(value)) {
      assert_true(name in schema.properties, `${where} has no property ${name} beyond the schema`);
    }
  }
}
