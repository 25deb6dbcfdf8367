import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { specAccepts, expectTypeError } from '../helpers/rules';

import { checkRoots } from '../../lib/client/roots';

const project = { uri: 'file:///home/user/projects/myproject', name: 'My Project' };

describe('checkRoots: valid roots', () => {
  it('accepts file:// roots, which the official schema accepts too', () => {
    const roots = [
      project,
      { uri: 'file:///home/user/repos/backend' },
      { uri: 'file:///C:/Users/me/work', name: 'Windows' },
      { uri: 'file://server/share/folder' },
      { uri: 'FILE:///tmp' },
      { uri: pathToFileURL('/home/zoë/my notes').href, name: 'Notes', _meta: { 'com.example/tag': ['a'] } },
    ];
    for (const root of roots) expect(specAccepts('Root', root), root.uri).toBe(true);
    expect(checkRoots(roots)).toEqual(roots);
    expect(specAccepts('ListRootsResult', { roots: checkRoots(roots) })).toBe(true);
  });

  it('accepts no roots', () => {
    expect(checkRoots([])).toEqual([]);
  });

  it('returns a deep-frozen copy and leaves the input alone', () => {
    const meta = { nested: { list: [1, 2] } };
    const input = [{ ...project, _meta: meta }];
    const roots = checkRoots(input);
    expect(roots).not.toBe(input);
    expect(roots[0]).not.toBe(input[0]);
    expect(roots[0]?._meta).not.toBe(meta);
    expect(Object.isFrozen(roots)).toBe(true);
    expect(Object.isFrozen(roots[0])).toBe(true);
    expect(Object.isFrozen((roots[0]?._meta as typeof meta).nested.list)).toBe(true);
    expect(() => (roots as unknown[]).push(project)).toThrow(TypeError);
    expect(() => ((roots[0] as { uri: string }).uri = 'file:///etc')).toThrow(TypeError);
    expect(Object.isFrozen(input)).toBe(false);
    expect(Object.isFrozen(meta)).toBe(false);
    input[0]!.name = 'changed later';
    expect(roots[0]?.name).toBe('My Project');
  });

  it('returns an already checked list as is, so it can be shared by reference', () => {
    const roots = checkRoots([project]);
    expect(checkRoots(roots)).toBe(roots);
    expect(checkRoots([...roots])).not.toBe(roots);
  });

  it('keeps only uri, name and _meta', () => {
    expect(checkRoots([{ ...project, title: 'x', extra: 1 }])).toEqual([project]);
  });
});

describe('checkRoots: mistakes', () => {
  it('refuses something other than an array', () => {
    expectTypeError(() => checkRoots(project), 'roots must be an array');
    expectTypeError(() => checkRoots(undefined), 'roots must be an array');
    expectTypeError(() => checkRoots('file:///x'), 'roots must be an array');
  });

  it('names an entry that is not an object', () => {
    expectTypeError(() => checkRoots([project, 'file:///tmp']), 'roots[1] must be an object with a uri');
    expectTypeError(() => checkRoots([null]), 'roots[0] must be an object');
  });

  it('names an entry without a string uri', () => {
    expect(specAccepts('Root', { name: 'x' })).toBe(false);
    expectTypeError(() => checkRoots([project, { name: 'x' }]), 'roots[1].uri must be a string');
    expectTypeError(() => checkRoots([{ uri: 42 }]), 'roots[0].uri must be a string');
  });

  it('names an entry whose uri is not a file:// URI', () => {
    for (const uri of [
      'https://example.com/repo',
      '/home/user/project',
      'C:\\Users\\me',
      'file:/home/user',
      'files:///x',
      'git+file:///repo',
      '',
    ])
      expectTypeError(
        () => checkRoots([project, { uri }]),
        `roots[1].uri ${JSON.stringify(uri)} must be a file:// URI`,
      );
  });

  it('names an entry whose uri is not a valid URI, and says how to build one', () => {
    for (const uri of ['file:///home/user/my project', 'file:///home/zoë', 'file:///a\nb', 'file:///a%zz']) {
      expect(specAccepts('Root', { uri }), uri).toBe(false);
      expectTypeError(() => checkRoots([{ uri }]), 'roots[0].uri', 'is not a valid URI', 'pathToFileURL');
    }
    expectTypeError(() => checkRoots([{ uri: 'file://exa mple/x' }]), 'roots[0].uri');
  });

  it('names an entry whose name or _meta is wrong', () => {
    expect(specAccepts('Root', { ...project, name: 3 })).toBe(false);
    expectTypeError(() => checkRoots([project, project, { ...project, name: 3 }]), 'roots[2].name must be a string');
    expect(specAccepts('Root', { ...project, _meta: 'x' })).toBe(false);
    expectTypeError(() => checkRoots([{ ...project, _meta: 'x' }]), 'roots[0]._meta must be an object');
    expectTypeError(
      () => checkRoots([{ ...project, _meta: { callback: () => 1 } }]),
      'roots[0]._meta must be JSON data',
    );
  });
});
