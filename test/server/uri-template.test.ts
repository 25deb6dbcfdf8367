import { describe, expect, it } from 'vitest';
import { UriTemplate, type UriTemplateValue } from '../../lib/server/uri-template';

const match = (template: string, uri: string) => UriTemplate.parse(template).match(uri);

/** The variables of RFC 6570 section 3.2. */
const rfc: Record<string, UriTemplateValue> = {
  count: ['one', 'two', 'three'],
  dom: ['example', 'com'],
  dub: 'me/too',
  hello: 'Hello World!',
  half: '50%',
  var: 'value',
  who: 'fred',
  base: 'http://example.com/home/',
  path: '/foo/bar',
  list: ['red', 'green', 'blue'],
  keys: { semi: ';', dot: '.', comma: ',' },
  v: '6',
  x: '1024',
  y: '768',
  empty: '',
  empty_keys: {},
  undef: null,
};

describe('UriTemplate.parse', () => {
  it.each([
    ['{var', /at position 0: unclosed "\{"/],
    ['a{b{c}d', /at position 1: unclosed "\{"/],
    ['/id*}', /at position 4: "\}" without "\{"/],
    ['x{}', /at position 1: empty expression/],
    ['{!hello}', /operator "!" is reserved/],
    ['{=path}', /operator "=" is reserved/],
    ['{|var*}', /operator "\|" is reserved/],
    ['{$var}', /unknown operator "\$"/],
    ['{*keys?}', /unknown operator "\*"/],
    ['{/?id}', /invalid variable name "\?id"/],
    ['{??hello}', /invalid variable name "\?hello"/],
    ['/resolution{?x, y}', /at position 11: invalid variable name " y"/],
    ['{x,}', /invalid variable name ""/],
    ['{+}', /invalid variable name ""/],
    ['{a..b}', /invalid variable name "a\.\.b"/],
    ['{a.}', /invalid variable name "a\."/],
    ['{%zz}', /invalid variable name "%zz"/],
    ['{?empty=default,var}', /invalid variable name "empty=default"/],
    ['{var:prefix}', /invalid modifier ":prefix" on "var"/],
    ['{hello:2*}', /invalid modifier ":2\*" on "hello"/],
    ['{var:0}', /invalid modifier ":0"/],
    ['{var:10000}', /invalid modifier ":10000"/],
    ['{list**}', /invalid modifier "\*\*"/],
  ])('rejects %s', (template, message) => {
    expect(() => UriTemplate.parse(template)).toThrow(TypeError);
    expect(() => UriTemplate.parse(template)).toThrow(message);
  });

  it('names the template in the error', () => {
    expect(() => UriTemplate.parse('file:///{path')).toThrow('Invalid URI template "file:///{path" at position 8');
  });

  it('accepts the whole variable name and modifier grammar', () => {
    for (const template of ['{var:9999}', '{%41b}', '{a.b_c9}', '{_}', '{+x,y*,z:1}', 'no/expressions']) {
      expect(UriTemplate.parse(template).template).toBe(template);
    }
  });

  it('lists variable names in order of appearance, without duplicates', () => {
    const template = UriTemplate.parse('x://{/a,b}{?c,a}{&d*}/{e:3}/{b}');
    expect(template.variableNames).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(Object.isFrozen(template.variableNames)).toBe(true);
    expect(UriTemplate.parse('file:///README.md').variableNames).toEqual([]);
  });
});

describe('expand: the RFC 6570 examples', () => {
  const examples: Record<string, [string, string][]> = {
    'level 1, simple string expansion (3.2.2)': [
      ['{var}', 'value'],
      ['{hello}', 'Hello%20World%21'],
      ['{half}', '50%25'],
      ['O{empty}X', 'OX'],
      ['O{undef}X', 'OX'],
    ],
    'level 2, reserved expansion (3.2.3)': [
      ['{+var}', 'value'],
      ['{+hello}', 'Hello%20World!'],
      ['{+half}', '50%25'],
      ['{base}index', 'http%3A%2F%2Fexample.com%2Fhome%2Findex'],
      ['{+base}index', 'http://example.com/home/index'],
      ['O{+empty}X', 'OX'],
      ['O{+undef}X', 'OX'],
      ['{+path}/here', '/foo/bar/here'],
      ['here?ref={+path}', 'here?ref=/foo/bar'],
      ['up{+path}{var}/here', 'up/foo/barvalue/here'],
    ],
    'level 2, fragment expansion (3.2.4)': [
      ['{#var}', '#value'],
      ['{#hello}', '#Hello%20World!'],
      ['{#half}', '#50%25'],
      ['foo{#empty}', 'foo#'],
      ['foo{#undef}', 'foo'],
    ],
    'level 3, several variables (3.2.2 to 3.2.4)': [
      ['{x,y}', '1024,768'],
      ['{x,hello,y}', '1024,Hello%20World%21,768'],
      ['?{x,empty}', '?1024,'],
      ['?{x,undef}', '?1024'],
      ['?{undef,y}', '?768'],
      ['{+x,hello,y}', '1024,Hello%20World!,768'],
      ['{+path,x}/here', '/foo/bar,1024/here'],
      ['{#x,hello,y}', '#1024,Hello%20World!,768'],
      ['{#path,x}/here', '#/foo/bar,1024/here'],
    ],
    'level 3, label expansion (3.2.5)': [
      ['{.who}', '.fred'],
      ['{.who,who}', '.fred.fred'],
      ['{.half,who}', '.50%25.fred'],
      ['X{.var}', 'X.value'],
      ['X{.empty}', 'X.'],
      ['X{.undef}', 'X'],
    ],
    'level 3, path segments (3.2.6)': [
      ['{/who}', '/fred'],
      ['{/who,who}', '/fred/fred'],
      ['{/half,who}', '/50%25/fred'],
      ['{/who,dub}', '/fred/me%2Ftoo'],
      ['{/var}', '/value'],
      ['{/var,empty}', '/value/'],
      ['{/var,undef}', '/value'],
      ['{/var,x}/here', '/value/1024/here'],
    ],
    'level 3, path-style parameters (3.2.7)': [
      ['{;who}', ';who=fred'],
      ['{;half}', ';half=50%25'],
      ['{;empty}', ';empty'],
      ['{;v,empty,who}', ';v=6;empty;who=fred'],
      ['{;v,bar,who}', ';v=6;who=fred'],
      ['{;x,y}', ';x=1024;y=768'],
      ['{;x,y,empty}', ';x=1024;y=768;empty'],
      ['{;x,y,undef}', ';x=1024;y=768'],
    ],
    'level 3, form-style query (3.2.8, 3.2.9)': [
      ['{?who}', '?who=fred'],
      ['{?half}', '?half=50%25'],
      ['{?x,y}', '?x=1024&y=768'],
      ['{?x,y,empty}', '?x=1024&y=768&empty='],
      ['{?x,y,undef}', '?x=1024&y=768'],
      ['{&who}', '&who=fred'],
      ['{&half}', '&half=50%25'],
      ['?fixed=yes{&x}', '?fixed=yes&x=1024'],
      ['{&x,y,empty}', '&x=1024&y=768&empty='],
    ],
    'level 4, prefix modifiers': [
      ['{var:3}', 'val'],
      ['{var:30}', 'value'],
      ['{+path:6}/here', '/foo/b/here'],
      ['{#path:6}/here', '#/foo/b/here'],
      ['X{.var:3}', 'X.val'],
      ['{/var:1,var}', '/v/value'],
      ['{/list*,path:4}', '/red/green/blue/%2Ffoo'],
      ['{;hello:5}', ';hello=Hello'],
      ['{?var:3}', '?var=val'],
      ['{&var:3}', '&var=val'],
    ],
    'level 4, lists and associative arrays (3.2.1 and each operator)': [
      ['{count}', 'one,two,three'],
      ['{count*}', 'one,two,three'],
      ['{/count}', '/one,two,three'],
      ['{/count*}', '/one/two/three'],
      ['{;count}', ';count=one,two,three'],
      ['{;count*}', ';count=one;count=two;count=three'],
      ['{?count}', '?count=one,two,three'],
      ['{?count*}', '?count=one&count=two&count=three'],
      ['{&count*}', '&count=one&count=two&count=three'],
      ['{list}', 'red,green,blue'],
      ['{list*}', 'red,green,blue'],
      ['{keys}', 'semi,%3B,dot,.,comma,%2C'],
      ['{keys*}', 'semi=%3B,dot=.,comma=%2C'],
      ['{+list}', 'red,green,blue'],
      ['{+list*}', 'red,green,blue'],
      ['{+keys}', 'semi,;,dot,.,comma,,'],
      ['{+keys*}', 'semi=;,dot=.,comma=,'],
      ['{#list}', '#red,green,blue'],
      ['{#list*}', '#red,green,blue'],
      ['{#keys}', '#semi,;,dot,.,comma,,'],
      ['{#keys*}', '#semi=;,dot=.,comma=,'],
      ['www{.dom*}', 'www.example.com'],
      ['X{.list}', 'X.red,green,blue'],
      ['X{.list*}', 'X.red.green.blue'],
      ['X{.keys}', 'X.semi,%3B,dot,.,comma,%2C'],
      ['X{.keys*}', 'X.semi=%3B.dot=..comma=%2C'],
      ['X{.empty_keys}', 'X'],
      ['X{.empty_keys*}', 'X'],
      ['{/list}', '/red,green,blue'],
      ['{/list*}', '/red/green/blue'],
      ['{/keys}', '/semi,%3B,dot,.,comma,%2C'],
      ['{/keys*}', '/semi=%3B/dot=./comma=%2C'],
      ['{;list}', ';list=red,green,blue'],
      ['{;list*}', ';list=red;list=green;list=blue'],
      ['{;keys}', ';keys=semi,%3B,dot,.,comma,%2C'],
      ['{;keys*}', ';semi=%3B;dot=.;comma=%2C'],
      ['{?list}', '?list=red,green,blue'],
      ['{?list*}', '?list=red&list=green&list=blue'],
      ['{?keys}', '?keys=semi,%3B,dot,.,comma,%2C'],
      ['{?keys*}', '?semi=%3B&dot=.&comma=%2C'],
      ['{&list}', '&list=red,green,blue'],
      ['{&list*}', '&list=red&list=green&list=blue'],
      ['{&keys}', '&keys=semi,%3B,dot,.,comma,%2C'],
      ['{&keys*}', '&semi=%3B&dot=.&comma=%2C'],
    ],
  };
  for (const [level, table] of Object.entries(examples)) {
    describe(level, () => {
      it.each(table)('%s', (template, expected) => {
        expect(UriTemplate.parse(template).expand(rfc)).toBe(expected);
      });
    });
  }
});

describe('expand: encoding and edge cases', () => {
  it('percent-encodes UTF-8', () => {
    expect(UriTemplate.parse('{name}').expand({ name: 'café €' })).toBe('caf%C3%A9%20%E2%82%AC');
    expect(UriTemplate.parse('{emoji:1}').expand({ emoji: '😀x' })).toBe('%F0%9F%98%80');
    expect(UriTemplate.parse('{bad}').expand({ bad: '\uD800' })).toBe('%EF%BF%BD');
  });

  it('keeps percent triplets only where reserved characters pass', () => {
    const variables = { raw: '%41%zz/' };
    expect(UriTemplate.parse('{raw}').expand(variables)).toBe('%2541%25zz%2F');
    expect(UriTemplate.parse('{+raw}').expand(variables)).toBe('%41%25zz/');
  });

  it('encodes literal characters that may not appear in a URI, as the RFC requires', () => {
    expect(UriTemplate.parse('file:///my docs/{name}').expand({ name: 'a' })).toBe('file:///my%20docs/a');
    expect(UriTemplate.parse('x/50%/{n}%2f').expand({ n: '1' })).toBe('x/50%25/1%2f');
  });

  it('reads only own properties of the variables', () => {
    expect(UriTemplate.parse('a{constructor}{?toString}b').expand({})).toBe('ab');
  });

  it('rejects a prefix modifier on a composite value', () => {
    expect(() => UriTemplate.parse('{keys:1}').expand(rfc)).toThrow(TypeError);
    expect(() => UriTemplate.parse('{+list:1}').expand(rfc)).toThrow(/prefix modifier/);
  });
});

describe('match: level 1', () => {
  it('matches {var} as one or more characters up to the next literal', () => {
    expect(match('users://{id}/profile', 'users://42/profile')).toEqual({ id: '42' });
    expect(match('file:///{path}', 'file:///README.md')).toEqual({ path: 'README.md' });
    expect(match('hello {name}!', 'hello%20Ada!')).toEqual({ name: 'Ada' });
  });

  it('percent-decodes values, so an encoded "/" is part of the value', () => {
    expect(match('file:///{path}', 'file:///docs%2Fguide%20one.md')).toEqual({ path: 'docs/guide one.md' });
    expect(match('users://{id}/profile', 'users://S%C3%A3o/profile')).toEqual({ id: 'São' });
    expect(match('users://{id}/profile', 'users://a%3Fb%23c/profile')).toEqual({ id: 'a?b#c' });
  });

  it('does not match across "/", "?" or "#"', () => {
    expect(match('file:///{path}', 'file:///docs/guide.md')).toBeUndefined();
    expect(match('file:///{path}', 'file:///a?b')).toBeUndefined();
    expect(match('file:///{path}', 'file:///a#b')).toBeUndefined();
  });

  it('rejects a wrong scheme', () => {
    expect(match('users://{id}/profile', 'people://42/profile')).toBeUndefined();
    expect(match('users://{id}/profile', 'USERS://42/profile')).toBeUndefined();
  });

  it('rejects a missing segment', () => {
    expect(match('users://{id}/profile', 'users:///profile')).toBeUndefined();
    expect(match('users://{id}/profile', 'users://42')).toBeUndefined();
  });

  it('rejects extra path, a query, or a literal of another case', () => {
    expect(match('users://{id}/profile', 'users://42/profile/extra')).toBeUndefined();
    expect(match('users://{id}/profile', 'users://42/profile?x=1')).toBeUndefined();
    expect(match('users://{id}/profile', 'users://42/Profile')).toBeUndefined();
  });

  it('matches a template without expressions exactly', () => {
    expect(match('file:///README.md', 'file:///README.md')).toEqual({});
    expect(match('file:///README.md', 'file:///README.mdx')).toBeUndefined();
  });
});

describe('match: level 2', () => {
  it('lets {+var} span "/" and take the rest of the path', () => {
    expect(match('file:///{+path}', 'file:///src/lib/index.ts')).toEqual({ path: 'src/lib/index.ts' });
    expect(match('repo://{owner}/{repo}/blob/{+path}', 'repo://acme/site/blob/docs/a%20b.md')).toEqual({
      owner: 'acme',
      repo: 'site',
      path: 'docs/a b.md',
    });
    expect(match('{+path}/here', '/foo/bar/here')).toEqual({ path: '/foo/bar' });
    expect(match('here?ref={+path}', 'here?ref=/foo/bar')).toEqual({ path: '/foo/bar' });
  });

  it('keeps "?" and "#" out of {+var}, and needs one character', () => {
    expect(match('file:///{+path}', 'file:///a/b?version=2')).toBeUndefined();
    expect(match('file:///{+path}', 'file:///a#top')).toBeUndefined();
    expect(match('file:///{+path}', 'file:///')).toBeUndefined();
    expect(match('file:///{+path}{?version}', 'file:///a/b?version=2')).toEqual({ path: 'a/b', version: '2' });
  });

  it('matches an optional {#var} fragment that may span "/" and "?"', () => {
    expect(match('doc://guide{#section}', 'doc://guide#install/linux?arch=arm')).toEqual({
      section: 'install/linux?arch=arm',
    });
    expect(match('doc://guide{#section}', 'doc://guide#')).toEqual({ section: '' });
    expect(match('doc://guide{#section}', 'doc://guide')).toEqual({});
    expect(match('doc://guide{#section}', 'doc://guide#a#b')).toBeUndefined();
  });
});

describe('match: level 3', () => {
  it('splits several variables in one expression, later ones optional', () => {
    expect(match('map://{x,y}', 'map://1024,768')).toEqual({ x: '1024', y: '768' });
    expect(match('map://{x,y}', 'map://1024')).toEqual({ x: '1024' });
    expect(match('map://{x,y}', 'map://1,2,3')).toBeUndefined();
    expect(match('map://{+x,hello}', 'map://a/b,Hello%20World!')).toEqual({ x: 'a/b', hello: 'Hello World!' });
  });

  it('matches query pairs in any order, each optional', () => {
    const template = UriTemplate.parse('search://items{?q,limit}');
    expect(template.match('search://items?q=mcp&limit=10')).toEqual({ q: 'mcp', limit: '10' });
    expect(template.match('search://items?limit=10&q=mcp')).toEqual({ q: 'mcp', limit: '10' });
    expect(template.match('search://items?limit=5')).toEqual({ limit: '5' });
    expect(template.match('search://items')).toEqual({});
    expect(template.match('search://items?q=&limit')).toEqual({ q: '', limit: '' });
    expect(template.match('search://items?q=a%26b%3Dc+d')).toEqual({ q: 'a&b=c+d' });
    expect(template.match('search://items?q=a=b')).toEqual({ q: 'a=b' });
  });

  describe('a query {?q,limit}', () => {
    const template = UriTemplate.parse('search://items{?q,limit}');

    it('refuses unknown query parameters', () => {
      expect(template.match('search://items?q=mcp&page=2')).toBeUndefined();
      expect(template.match('search://items?qq=1')).toBeUndefined();
    });

    it('refuses different values repeated for a single one, takes the same value repeated', () => {
      expect(template.match('search://items?q=a&q=b')).toBeUndefined();
      expect(template.match('search://items?q=a&q=a')).toEqual({ q: 'a' });
    });

    it('refuses a bare "?" and a "/" before the query', () => {
      expect(template.match('search://items?')).toBeUndefined();
      expect(template.match('search://items/?q=a')).toBeUndefined();
    });
  });

  it('matches a path with a query: weather://{city}/current{?units,lang}', () => {
    const template = UriTemplate.parse('weather://{city}/current{?units,lang}');
    expect(template.match('weather://Oslo/current')).toEqual({ city: 'Oslo' });
    expect(template.match('weather://New%20York/current?lang=en&units=imperial')).toEqual({
      city: 'New York',
      units: 'imperial',
      lang: 'en',
    });
    expect(template.match('weather://Oslo/forecast?units=metric')).toBeUndefined();
    expect(template.match('weather:///current?units=metric')).toBeUndefined();
  });

  it('matches query continuation after a fixed query and after {?var}', () => {
    expect(match('list://all?fixed=yes{&x,y}', 'list://all?fixed=yes&y=2')).toEqual({ y: '2' });
    expect(match('list://all?fixed=yes{&x,y}', 'list://all?fixed=yes')).toEqual({});
    expect(match('list://all?fixed=yes{&x,y}', 'list://all?y=2&fixed=yes')).toBeUndefined();
    expect(match('list://all{?x}{&y}', 'list://all?x=1&y=2')).toEqual({ x: '1', y: '2' });
    expect(match('list://all{?x}{&y}', 'list://all?y=2')).toBeUndefined();
  });

  it('matches labels, path segments and path-style parameters', () => {
    expect(match('host://www{.dom,tld}', 'host://www.example.com')).toEqual({ dom: 'example', tld: 'com' });
    expect(match('host://X{.var}', 'host://X.')).toEqual({ var: '' });
    expect(match('host://X{.var}', 'host://X')).toEqual({});
    expect(match('tree://{/a,b}', 'tree:///x/y')).toEqual({ a: 'x', b: 'y' });
    expect(match('tree://{/a,b}', 'tree:///x/')).toEqual({ a: 'x', b: '' });
    expect(match('tree://{/a,b}', 'tree:///x/y/z')).toBeUndefined();
    expect(match('m://x{;v,empty,who}', 'm://x;who=fred;empty;v=6')).toEqual({ v: '6', empty: '', who: 'fred' });
    expect(match('m://x{;v,empty,who}', 'm://x;other=1')).toBeUndefined();
  });
});

describe('match: level 4', () => {
  it('limits a prefix variable to N characters, counting an encoded character as one', () => {
    const template = UriTemplate.parse('tag://{code:3}');
    expect(template.match('tag://abc')).toEqual({ code: 'abc' });
    expect(template.match('tag://ab')).toEqual({ code: 'ab' });
    expect(template.match('tag://abcd')).toBeUndefined();
    expect(template.match('tag://%C3%A9t%C3%A9')).toEqual({ code: 'été' });
    expect(template.match('tag://%F0%9F%98%80')).toEqual({ code: '😀' });
    expect(match('m://x{?var:3}', 'm://x?var=valu')).toBeUndefined();
  });

  it('returns exploded path segments as a list', () => {
    const template = UriTemplate.parse('repo://{owner}/{repo}/tree{/segments*}');
    expect(template.match('repo://acme/site/tree/src/lib/a%20b.ts')).toEqual({
      owner: 'acme',
      repo: 'site',
      segments: ['src', 'lib', 'a b.ts'],
    });
    expect(template.match('repo://acme/site/tree')).toEqual({ owner: 'acme', repo: 'site' });
    expect(template.match('repo://acme/site/tree/')).toEqual({ owner: 'acme', repo: 'site', segments: [''] });
    expect(template.match('repo://acme/site/tree/a?b')).toBeUndefined();
  });

  it('collects repeated exploded query names into a list', () => {
    const template = UriTemplate.parse('search://items{?tag*,q}');
    expect(template.match('search://items?tag=a&q=x&tag=b%20c')).toEqual({ tag: ['a', 'b c'], q: 'x' });
    expect(template.match('search://items?tag=a')).toEqual({ tag: ['a'] });
    expect(match('m://x{;list*}', 'm://x;list=red;list=green')).toEqual({ list: ['red', 'green'] });
  });

  it('returns other exploded lists split on their separator, and unexploded ones as one string', () => {
    expect(match('c://{count*}', 'c://one,two,three')).toEqual({ count: ['one', 'two', 'three'] });
    expect(match('c://www{.dom*}', 'c://www.example.com')).toEqual({ dom: ['example', 'com'] });
    expect(match('c://{count}', 'c://one,two,three')).toEqual({ count: 'one,two,three' });
    expect(match('c://x{?list}', 'c://x?list=red,green')).toEqual({ list: 'red,green' });
  });

  it('requires the variables after an exploded one', () => {
    expect(match('{/list*,path:4}', '/red/green/blue/%2Ffoo')).toEqual({
      list: ['red', 'green', 'blue'],
      path: '/foo',
    });
    expect(match('{/list*,path:4}', '/red')).toBeUndefined();
  });

  it('does not reconstruct associative arrays: their keys are unknown names', () => {
    expect(match('c://x{?keys*}', 'c://x?semi=%3B&dot=.')).toBeUndefined();
    expect(match('c://x{?keys*}', 'c://x')).toEqual({});
  });
});

describe('match: variables that occur more than once', () => {
  it('needs the same value each time, a prefix occurrence being the start of it', () => {
    expect(match('x://{a}/{a}', 'x://same/same')).toEqual({ a: 'same' });
    expect(match('x://{a}/{a}', 'x://one/two')).toBeUndefined();
    expect(match('{/var:1,var}', '/v/value')).toEqual({ var: 'value' });
    expect(match('{/var:1,var}', '/x/value')).toBeUndefined();
    expect(match('x://{a:2}/{a:4}', 'x://ab/abcd')).toEqual({ a: 'abcd' });
    expect(match('x://{a}/{a:3}', 'x://ab/abc')).toBeUndefined();
    expect(match('x://{l*}/{l*}', 'x://a,b/a,b')).toEqual({ l: ['a', 'b'] });
    expect(match('x://{l*}/{l}', 'x://a,b/a,b')).toBeUndefined();
  });
});

describe('match: where ambiguous expressions end', () => {
  it('ends earlier expressions at the first occurrence of the next literal', () => {
    expect(match('log://{year}-{month}-{day}', 'log://2024-01-05')).toEqual({ year: '2024', month: '01', day: '05' });
    expect(match('log://{a}-{b}-{c}', 'log://x-y-z-w')).toEqual({ a: 'x', b: 'y', c: 'z-w' });
  });

  it('lets the last ambiguous expression end wherever the rest matches', () => {
    expect(match('file:///{+dir}/{name}.md', 'file:///a/b/c.md')).toEqual({ dir: 'a/b', name: 'c' });
    expect(match('log://{a}-{b}-{c}.log', 'log://x-y-z.log')).toEqual({ a: 'x', b: 'y', c: 'z' });
    expect(match('x://{+a}/{+b}/end', 'x://1/2/3/4/end')).toEqual({ a: '1', b: '2/3/4' });
  });

  it('anchors an expression before the final literal at the end of the URI', () => {
    expect(match('file:///{+path}.txt', 'file:///a.txt/b.txt')).toEqual({ path: 'a.txt/b' });
    expect(match('up{+path}/here', 'up/here/here')).toEqual({ path: '/here' });
  });

  it('stops an expression before the operator of one that directly follows it', () => {
    expect(match('file:///{name}{.ext}', 'file:///notes.txt')).toEqual({ name: 'notes', ext: 'txt' });
    expect(match('file:///{name}{.ext}', 'file:///notes')).toEqual({ name: 'notes' });
    expect(match('file:///{name}{.ext}', 'file:///a.tar.gz')).toBeUndefined();
    expect(match('file:///{name}{.ext*}', 'file:///a.tar.gz')).toEqual({ name: 'a', ext: ['tar', 'gz'] });
    expect(match('x://{/a,b}{/c}', 'x:///1/2/3')).toEqual({ a: '1', b: '2', c: '3' });
  });

  it('lets an expression directly followed by {var} take all it can', () => {
    expect(match('x://{a}{b}', 'x://ab')).toBeUndefined();
    expect(match('up{+path}{var}/here', 'up/foo/barvalue/here')).toBeUndefined();
  });
});

describe('match: normalisation', () => {
  it('compares literals after normalising percent-encoding', () => {
    expect(match('x://a%2fb/{id}', 'x://a%2Fb/1')).toEqual({ id: '1' });
    expect(match('x://a%2Fb/{id}', 'x://a%2fb/1')).toEqual({ id: '1' });
    expect(match('x://%7Euser/{id}', 'x://~user/1')).toEqual({ id: '1' });
    expect(match('x://~user/{id}', 'x://%7euser/1')).toEqual({ id: '1' });
    expect(match('x://a%2Fb/{id}', 'x://a/b/1')).toBeUndefined();
  });

  it('encodes characters that may not appear in a URI, in the template and in the URI', () => {
    expect(match('file:///café/{name}', 'file:///caf%C3%A9/a')).toEqual({ name: 'a' });
    expect(match('file:///caf%C3%A9/{name}', 'file:///café/a')).toEqual({ name: 'a' });
    expect(match('file:///my docs/{name}', 'file:///my%20docs/a b')).toEqual({ name: 'a b' });
    expect(match('x://50%/{n}', 'x://50%25/1')).toEqual({ n: '1' });
    expect(match('x://{n}', 'x://100%')).toEqual({ n: '100%' });
  });

  it('fails when a value is not UTF-8', () => {
    expect(match('x://{n}', 'x://%FF')).toBeUndefined();
    expect(match('x://{n}', 'x://%C3')).toBeUndefined();
  });

  it('returns a variable named __proto__ as an own property', () => {
    const result = match('x://{__proto__}', 'x://value');
    expect(Object.hasOwn(result!, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(result, '__proto__')?.value).toBe('value');
  });
});

describe('match: round trips', () => {
  const cases: [string, Record<string, string | string[]>][] = [
    ['users://{id}/profile', { id: 'Ada Lovelace' }],
    ['file:///{path}', { path: 'a/b c?d#e%f' }],
    ['file:///{+path}', { path: 'src/lib/index.ts' }],
    ['weather://{city}/current{?units,lang}', { city: 'São Paulo', units: 'metric', lang: 'pt' }],
    ['weather://{city}/current{?units,lang}', { city: 'Oslo' }],
    ['search://items{?q,limit}', { q: 'a&b=c #1', limit: '10' }],
    ['repo://{owner}/{repo}/tree{/segments*}', { owner: 'acme', repo: 'site', segments: ['src', 'a b', 'c.ts'] }],
    ['repo://{owner}/{repo}/blob/{+path}', { owner: 'acme', repo: 'site', path: 'docs/guide.md' }],
    ['map://{x,y}', { x: '1024', y: '768' }],
    ['map://{x,hello,y}', { x: '1024', hello: 'Hello World!', y: '768' }],
    ['map://{+x,hello,y}', { x: '1024', hello: 'Hello World!', y: '768' }],
    ['doc://guide{#section}', { section: 'install/linux' }],
    ['host://www{.dom*}', { dom: ['example', 'com'] }],
    ['host://X{.who,who}', { who: 'fred' }],
    ['tree://{/who,dub}', { who: 'fred', dub: 'me/too' }],
    ['m://x{;v,empty,who}', { v: '6', empty: '', who: 'fred' }],
    ['m://x{;list*}', { list: ['red', 'green', 'blue'] }],
    ['m://x{?x,y,empty}', { x: '1024', y: '768', empty: '' }],
    ['m://x{?list*}{&x}', { list: ['red', 'green'], x: '1' }],
    ['c://{count*}', { count: ['one', 'two', 'three'] }],
    ['tag://{code:3}', { code: 'été' }],
    ['log://{year}-{month}-{day}', { year: '2024', month: '01', day: '05' }],
    ['file:///{+dir}/{name}.md', { dir: 'a/b', name: 'c' }],
    ['file:///{name}{.ext*}', { name: 'archive', ext: ['tar', 'gz'] }],
  ];
  it.each(cases)('%s', (source, variables) => {
    const template = UriTemplate.parse(source);
    expect(template.match(template.expand(variables))).toEqual(variables);
  });

  it('gives back what the RFC examples put in, where matching can tell', () => {
    const uri = '/red/green/blue/%2Ffoo';
    expect(UriTemplate.parse('{/list*,path:4}').expand(rfc)).toBe(uri);
    expect(match('{/list*,path:4}', uri)).toEqual({ list: rfc.list, path: '/foo' });
    expect(match('{/var:1,var}', UriTemplate.parse('{/var:1,var}').expand(rfc))).toEqual({ var: 'value' });
  });
});

describe('match: limits and many templates', () => {
  it('never matches a URI longer than 8192 characters, before or after normalisation', () => {
    const template = UriTemplate.parse('file:///{+path}');
    const prefix = 'file:///';
    expect(template.match(prefix + 'a'.repeat(8192 - prefix.length))).toBeDefined();
    expect(template.match(prefix + 'a'.repeat(8193 - prefix.length))).toBeUndefined();
    expect(template.match(prefix + 'é'.repeat(1000))).toBeDefined();
    expect(template.match(prefix + 'é'.repeat(2000))).toBeUndefined();
  });

  it('finishes on inputs built to make ambiguous templates backtrack', () => {
    const hostile: [string, string][] = [
      ['{a}-{b}-{c}-{d}', '-'.repeat(8000) + '/'],
      ['{+a}/{+b}/{+c}/{+d}', '/'.repeat(8000) + '?'],
      ['{a}{b}{c}{d}', 'a'.repeat(8000) + '/'],
      ['{.a}{.b}{.c}{.d}', '.x'.repeat(4000) + '/'],
      ['{/a}{/b}{/c}{/d}', '/x'.repeat(4000) + '#'],
      ['x{?a,b,ab,ba}', 'x?' + 'a=1&ab=2&'.repeat(800) + '#'],
      ['{var:9999}', '%C3%A9'.repeat(1300) + '/'],
    ];
    for (const [template, uri] of hostile) expect(match(template, uri)).toBeUndefined();
  });

  it('picks the one template that serves a URI among hundreds', () => {
    const templates = Array.from({ length: 300 }, (_, i) =>
      UriTemplate.parse(i % 2 ? `svc${i}://{id}/items{?q,limit}` : `svc${i}://{owner}/{+path}`),
    );
    const serving = (uri: string) =>
      templates.flatMap((template) => {
        const variables = template.match(uri);
        return variables ? [{ template: template.template, variables }] : [];
      });
    expect(serving('svc17://42/items?limit=3')).toEqual([
      { template: 'svc17://{id}/items{?q,limit}', variables: { id: '42', limit: '3' } },
    ]);
    expect(serving('svc42://acme/docs/a.md')).toEqual([
      { template: 'svc42://{owner}/{+path}', variables: { owner: 'acme', path: 'docs/a.md' } },
    ]);
    expect(serving('svc17://42/items?page=3')).toEqual([]);
  });
});
