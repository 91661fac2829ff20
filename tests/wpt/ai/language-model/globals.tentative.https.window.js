// META: title=LanguageModel and the tool classes as WebIDL interfaces
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kToolClasses = ['LanguageModelToolCall', 'LanguageModelToolSuccess', 'LanguageModelToolError'];

test(() => {
  assert_equals(typeof LanguageModel, 'function');
  assert_equals(LanguageModel.name, 'LanguageModel');
  assert_equals(LanguageModel.length, 0, 'no constructor operation: length 0');
  assert_true(LanguageModel.prototype instanceof EventTarget, 'the prototype inherits EventTarget');
  assert_equals(Object.getPrototypeOf(LanguageModel), EventTarget, 'the interface object inherits EventTarget');
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'LanguageModel');
  assert_true(descriptor.writable && descriptor.configurable && !descriptor.enumerable,
              'a writable, configurable, non-enumerable global');
}, 'LanguageModel is a global interface inheriting from EventTarget');

test(() => {
  assert_throws_js(TypeError, () => new LanguageModel());
  assert_throws_js(TypeError, () => new LanguageModel({}));
  assert_throws_js(TypeError, () => LanguageModel());
}, 'LanguageModel cannot be constructed or called');

test(() => {
  for (const name of ['contextUsage', 'contextWindow', 'oncontextoverflow', 'samplingMode']) {
    const descriptor = Object.getOwnPropertyDescriptor(LanguageModel.prototype, name);
    assert_not_equals(descriptor, undefined, `${name} is on the prototype`);
    assert_equals(typeof descriptor.get, 'function', `${name} has a getter`);
    assert_true(descriptor.configurable, `${name} is configurable`);
    assert_false('value' in descriptor, `${name} is an accessor`);
  }
  for (const name of ['contextUsage', 'contextWindow', 'samplingMode']) {
    assert_equals(Object.getOwnPropertyDescriptor(LanguageModel.prototype, name).set, undefined,
                  `${name} is read-only`);
  }
  assert_equals(typeof Object.getOwnPropertyDescriptor(LanguageModel.prototype, 'oncontextoverflow').set,
                'function', 'oncontextoverflow has a setter');
}, 'The attributes are accessor properties on LanguageModel.prototype');

test(() => {
  const expected = {
    prompt: 1, promptStreaming: 1, append: 1, measureContextUsage: 1, clone: 0, destroy: 0,
  };
  for (const [name, length] of Object.entries(expected)) {
    const descriptor = Object.getOwnPropertyDescriptor(LanguageModel.prototype, name);
    assert_not_equals(descriptor, undefined, `${name} is on the prototype`);
    assert_equals(typeof descriptor.value, 'function', name);
    assert_true(descriptor.writable && descriptor.configurable, `${name} is writable and configurable`);
    assert_equals(descriptor.value.length, length, `${name}.length`);
    assert_equals(descriptor.value.name, name, `${name}.name`);
  }
  for (const [name, length] of Object.entries({create: 0, availability: 0})) {
    assert_equals(typeof LanguageModel[name], 'function', name);
    assert_true(Object.hasOwn(LanguageModel, name), `${name} is static`);
    assert_equals(LanguageModel[name].length, length, `${name}.length`);
  }
}, 'The methods have their WebIDL lengths');

test(() => {
  assert_false('params' in LanguageModel, 'params()');
  for (const name of ['measureInputUsage', 'inputUsage', 'inputQuota', 'onquotaoverflow', 'topK', 'temperature']) {
    assert_false(name in LanguageModel.prototype, name);
  }
}, 'The extension-only members are not exposed in a window');

promise_test(async () => {
  await ensureLanguageModel();
  const session = await createLanguageModel();
  assert_equals(session.topK, undefined);
  assert_equals(session.temperature, undefined);
  const withSampling = await createLanguageModel({topK: 2, temperature: 0.5});
  assert_equals(withSampling.topK, undefined);
  assert_equals(withSampling.temperature, undefined);
  assert_equals(withSampling.samplingMode, 'balanced', 'ignored options leave the default mode');
  assert_equals(Object.getPrototypeOf(session), LanguageModel.prototype);
  assert_equals(Object.getOwnPropertyNames(session).length, 0, 'no own properties');
}, 'A session has no topK or temperature in a window');

promise_test(async () => {
  const session = await createLanguageModel();
  assert_equals(Object.prototype.toString.call(session), '[object LanguageModel]');
  assert_equals(Object.prototype.toString.call(LanguageModel.prototype), '[object LanguageModel]');
  assert_equals(String(new LanguageModelToolCall({callId: 'c', name: 'n'})),
                '[object LanguageModelToolCall]');
  assert_equals(String(new LanguageModelToolSuccess({callId: 'c', name: 'n', result: []})),
                '[object LanguageModelToolSuccess]');
  assert_equals(String(new LanguageModelToolError({callId: 'c', name: 'n', errorMessage: 'e'})),
                '[object LanguageModelToolError]');
}, 'Object.prototype.toString gives the interface names');

test(() => {
  for (const name of kToolClasses) {
    const cls = globalThis[name];
    assert_equals(typeof cls, 'function', name);
    assert_equals(cls.name, name, `${name}.name`);
    assert_equals(cls.length, 1, `${name}.length`);
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, name);
    assert_false(descriptor.enumerable, `${name} is not enumerable`);
    for (const attribute of ['callId', 'callID', 'name']) {
      const attr = Object.getOwnPropertyDescriptor(cls.prototype, attribute);
      assert_not_equals(attr, undefined, `${name}.prototype.${attribute}`);
      assert_equals(typeof attr.get, 'function', `${name}.prototype.${attribute} getter`);
      assert_equals(attr.set, undefined, `${name}.prototype.${attribute} is read-only`);
    }
  }
  assert_equals(typeof Object.getOwnPropertyDescriptor(LanguageModelToolCall.prototype, 'arguments').get,
                'function');
  assert_equals(typeof Object.getOwnPropertyDescriptor(LanguageModelToolSuccess.prototype, 'result').get,
                'function');
  assert_equals(typeof Object.getOwnPropertyDescriptor(LanguageModelToolError.prototype, 'errorMessage').get,
                'function');
}, 'The tool classes are global interfaces with read-only accessor attributes');

promise_test(async (t) => {
  const notAModel = {};
  for (const name of ['prompt', 'append', 'measureContextUsage', 'clone']) {
    let result;
    try {
      result = LanguageModel.prototype[name].call(notAModel, 'x');
    } catch (e) {
      assert_unreached(`${name} threw ${e} instead of rejecting`);
    }
    await promise_rejects_js(t, TypeError, result, name);
  }
  assert_throws_js(TypeError, () => LanguageModel.prototype.promptStreaming.call(notAModel, 'x'),
                   'promptStreaming');
  assert_throws_js(TypeError, () => LanguageModel.prototype.destroy.call(notAModel), 'destroy');
  const tool = new LanguageModelToolCall({callId: 'c', name: 'n'});
  await promise_rejects_js(t, TypeError, LanguageModel.prototype.prompt.call(tool, 'x'),
                           'prompt on a tool call');
}, 'A method called on something that is not a LanguageModel rejects (or throws) TypeError');

test(() => {
  for (const name of ['contextUsage', 'contextWindow', 'samplingMode', 'oncontextoverflow']) {
    const getter = Object.getOwnPropertyDescriptor(LanguageModel.prototype, name).get;
    assert_throws_js(TypeError, () => getter.call({}), name);
  }
  assert_throws_js(TypeError, () => LanguageModel.prototype.contextUsage, 'on the prototype itself');
  const callIdGetter = Object.getOwnPropertyDescriptor(LanguageModelToolCall.prototype, 'callId').get;
  assert_throws_js(TypeError, () => callIdGetter.call({}), 'LanguageModelToolCall callId');
  const resultGetter = Object.getOwnPropertyDescriptor(LanguageModelToolSuccess.prototype, 'result').get;
  assert_throws_js(TypeError, () => resultGetter.call(new LanguageModelToolCall({callId: 'c', name: 'n'})),
                   'LanguageModelToolSuccess result on a tool call');
}, 'Attribute getters called on the wrong object throw TypeError');

promise_test(async () => {
  const session = await createLanguageModel();
  const listener = () => {};
  session.oncontextoverflow = listener;
  assert_equals(session.oncontextoverflow, listener);
  session.oncontextoverflow = 'not callable';
  assert_equals(session.oncontextoverflow, null, 'a non-object becomes null');
  session.oncontextoverflow = null;
  assert_equals(session.oncontextoverflow, null);
}, 'oncontextoverflow is an event handler attribute');
