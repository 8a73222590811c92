import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

// What each handler of a service can throw, read from the source with TypeScript's checker: from
// the method a `@Handles(<catalog>.<key>)` decorates, every function, method, constructor and
// accessor it reaches (calls, callbacks, getters; an interface method reaches the methods of the
// classes that implement it) is read for its throw sites. A throw site is `new E(code, ...)` of a
// class that extends RpcError, with the codes the type of `code` allows (a literal, or a union of
// literals); a function that passes its own parameter on as the code (a factory such as
// billingError) is a throw site at each call, with the codes of that argument. Two more ways in:
// an object literal that names a catalog entry (`{ entry: sandboxCatalog.run, local: ... }`, the
// sandbox's session routes) binds its functions to that entry's handler, and a call of another
// subject through the typed client (`rpc.request(billingCatalog.hold, ...)`) may let that
// subject's errors pass through.

export interface ThrowSite {
  code: string;
  /** repo-relative file:line */
  at: string;
}

export interface HandlerThrows {
  /** The catalog key the handler answers (`run`, `filesRead`, ...). */
  key: string;
  handler: string;
  sites: ThrowSite[];
  /** Subjects of other services called through the typed client: `<catalogName>.<key>`. */
  calls: string[];
  /** Throw sites whose code the checker cannot narrow to literals (type `string`, say). */
  unknown: string[];
}

export interface ServiceThrows {
  handlers: HandlerThrows[];
  /** `new RpcError(...)` in the service's own code: it must throw its typed error instead. */
  untyped: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Reads every listed service's handlers (one TypeScript program for all of them). */
export function handlerThrows(root: string, services: readonly string[]): Map<string, ServiceThrows> {
  const dirs = new Map(services.map((s) => [s, join(root, 'apps', s, 'src') + sep]));
  const program = ts.createProgram(
    [...dirs.values()].flatMap((d) => sourceFiles(d)),
    {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      experimentalDecorators: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    },
  );
  const checker = program.getTypeChecker();
  const out = new Map<string, ServiceThrows>();
  for (const [service, dir] of dirs) {
    const files = program.getSourceFiles().filter((f) => f.fileName.startsWith(dir) && !f.fileName.includes(`${sep}generated${sep}`));
    out.set(service, readService(root, checker, files));
  }
  return out;
}

function readService(root: string, checker: ts.TypeChecker, files: readonly ts.SourceFile[]): ServiceThrows {
  const ours = new Set(files);
  const at = (node: ts.Node) => {
    const sf = node.getSourceFile();
    return `${relative(root, sf.fileName)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  };
  const inOurs = (node: ts.Node) => ours.has(node.getSourceFile());

  const symbolOf = (node: ts.Node): ts.Symbol | undefined => {
    const s = checker.getSymbolAtLocation(node);
    return s && s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
  };
  const isRpcErrorType = (type: ts.Type): boolean => {
    if (type.getSymbol()?.getName() === 'RpcError') return true;
    return type.isClassOrInterface() ? checker.getBaseTypes(type).some(isRpcErrorType) : false;
  };
  /** The class a `new` expression constructs, when it is a typed RPC error. */
  const rpcErrorClass = (node: ts.NewExpression): ts.Type | undefined => {
    const type = checker.getTypeAtLocation(node);
    return isRpcErrorType(type) ? type : undefined;
  };
  const hasOwnConstructor = (expr: ts.Expression): boolean =>
    (symbolOf(expr)?.declarations ?? []).some((d) => inOurs(d) && ts.isClassDeclaration(d) && d.members.some(ts.isConstructorDeclaration));
  /** The literal codes an argument's type allows, or undefined when it is not made of literals. */
  const codesOf = (arg: ts.Expression): string[] | undefined => {
    const type = checker.getTypeAtLocation(arg);
    const parts = type.isUnion() ? type.types : [type];
    return parts.every((t) => t.isStringLiteral()) ? parts.map((t) => t.value) : undefined;
  };
  /** The code is a parameter of a named function (a factory): where it is declared, and its position. */
  const parameterIndexOf = (arg: ts.Expression): { names: ts.Node[]; index: number } | undefined => {
    if (!ts.isIdentifier(arg)) return undefined;
    const decl = symbolOf(arg)?.valueDeclaration;
    if (!decl || !ts.isParameter(decl)) return undefined;
    const fn = decl.parent;
    const index = fn.parameters.indexOf(decl);
    if (ts.isFunctionDeclaration(fn) || ts.isMethodDeclaration(fn)) return { names: [fn], index };
    // const fooError = (code, ...) => new FooError(code, ...)
    if (ts.isArrowFunction(fn) && ts.isVariableDeclaration(fn.parent)) return { names: [fn.parent], index };
    return undefined;
  };

  // Factories: functions that hand one of their parameters on as an error's code.
  const factories = new Map<ts.Node, number>();
  const untyped: string[] = [];
  for (const sf of files) {
    const visit = (node: ts.Node) => {
      if (ts.isNewExpression(node) && rpcErrorClass(node)) {
        if (ts.isIdentifier(node.expression) && node.expression.text === 'RpcError') untyped.push(at(node));
        const arg = node.arguments?.[0];
        const param = arg && parameterIndexOf(arg);
        if (param) for (const name of param.names) factories.set(name, param.index);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }

  // Implementations of interface members, and the functions bound to a catalog entry by an object literal.
  const implementers = new Map<ts.Symbol, ts.ClassDeclaration[]>();
  const bound = new Map<string, ts.Node[]>();
  const boundLiterals = new Set<ts.Node>();
  for (const sf of files) {
    const visit = (node: ts.Node) => {
      if (ts.isClassDeclaration(node)) {
        for (const clause of node.heritageClauses ?? []) {
          if (clause.token !== ts.SyntaxKind.ImplementsKeyword) continue;
          for (const t of clause.types) {
            const s = symbolOf(t.expression);
            if (s) implementers.set(s, [...(implementers.get(s) ?? []), node]);
          }
        }
      }
      if (ts.isObjectLiteralExpression(node)) {
        const entry = node.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText() === 'entry');
        const key = entry && catalogKey(entry.initializer);
        if (key) {
          bound.set(key, [...(bound.get(key) ?? []), node]);
          boundLiterals.add(node);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }

  /** The declarations a reference leads to whose bodies run when it is called. */
  const targetsOf = (node: ts.Node, constructing: boolean): ts.Node[] => {
    const symbol = symbolOf(node);
    const targets: ts.Node[] = [];
    for (const decl of symbol?.declarations ?? []) {
      if (!inOurs(decl)) continue;
      if (ts.isClassDeclaration(decl)) {
        if (constructing) targets.push(...decl.members.filter((m) => ts.isConstructorDeclaration(m) || (ts.isPropertyDeclaration(m) && m.initializer)));
      } else if (ts.isFunctionLike(decl) && !ts.isMethodSignature(decl)) {
        targets.push(decl);
      } else if ((ts.isVariableDeclaration(decl) || ts.isPropertyDeclaration(decl) || ts.isPropertyAssignment(decl)) && decl.initializer) {
        targets.push(decl.initializer);
      } else if ((ts.isMethodSignature(decl) || ts.isPropertySignature(decl)) && ts.isInterfaceDeclaration(decl.parent)) {
        const iface = symbolOf(decl.parent.name);
        const name = decl.name.getText();
        for (const cls of (iface && implementers.get(iface)) ?? []) {
          targets.push(...cls.members.filter((m) => m.name?.getText() === name));
        }
      }
    }
    return targets;
  };

  const handlers: HandlerThrows[] = [];
  for (const sf of files) {
    const visit = (node: ts.Node) => {
      if (ts.isMethodDeclaration(node)) {
        for (const d of ts.getDecorators(node) ?? []) {
          if (!ts.isCallExpression(d.expression) || d.expression.expression.getText() !== 'Handles') continue;
          const key = d.expression.arguments[0] && catalogKey(d.expression.arguments[0]);
          if (!key) continue;
          const name = `${(node.parent as ts.ClassDeclaration).name?.text}.${node.name.getText()}`;
          handlers.push({ key: key.split('.')[1]!, handler: name, ...reach([node.body!, ...(bound.get(key) ?? [])]) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { handlers, untyped };

  function reach(roots: ts.Node[]): Omit<HandlerThrows, 'key' | 'handler'> {
    const seen = new Set<ts.Node>();
    const queue = [...roots];
    const sites: ThrowSite[] = [];
    const calls = new Set<string>();
    const unknown: string[] = [];
    const addCodes = (arg: ts.Expression | undefined, site: ts.Node) => {
      const codes = arg && codesOf(arg);
      if (codes) for (const code of codes) sites.push({ code, at: at(site) });
      else unknown.push(at(site));
    };
    const visit = (node: ts.Node) => {
      if (ts.isTypeNode(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) return;
      if (ts.isNewExpression(node) && rpcErrorClass(node)) {
        const arg = node.arguments?.[0];
        // A factory's own parameter: the code is its caller's (read at the call below). A class
        // with a constructor of its own that is not given a code passes one to super(), read there.
        if (!(arg && parameterIndexOf(arg)) && !(hasOwnConstructor(node.expression) && !(arg && codesOf(arg)))) addCodes(arg, node);
      }
      // An object literal bound to a catalog entry belongs to that entry's handler alone.
      if (ts.isObjectLiteralExpression(node) && boundLiterals.has(node) && !roots.includes(node)) return;
      // super(code, ...) in the constructor of an error class of its own (EngineDroppedLimitError).
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword) {
        let cls: ts.Node | undefined = node.parent;
        while (cls && !ts.isClassLike(cls)) cls = cls.parent;
        const arg = node.arguments[0];
        const param = arg && ts.isIdentifier(arg) && symbolOf(arg)?.valueDeclaration;
        if (cls && ts.isClassLike(cls) && isRpcErrorType(checker.getTypeAtLocation(cls)) && !(param && ts.isParameter(param))) addCodes(arg, node);
      }
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const callee = ts.isPropertyAccessExpression(node.expression) ? node.expression.name : node.expression;
        for (const decl of symbolOf(callee)?.declarations ?? []) {
          const index = factories.get(decl);
          if (index !== undefined) addCodes(node.arguments?.[index], node);
        }
        // Another subject through the typed client (NatsRpcClient.request).
        const first = node.arguments?.[0];
        const key = first && catalogKey(first);
        if (ts.isCallExpression(node) && key && callee.getText() === 'request') calls.add(key);
        if (ts.isNewExpression(node)) queue.push(...targetsOf(node.expression, true));
      }
      if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) queue.push(...targetsOf(node, false));
      ts.forEachChild(node, visit);
    };
    while (queue.length > 0) {
      const node = queue.pop()!;
      if (seen.has(node)) continue;
      seen.add(node);
      visit(node);
      // A class whose member runs was constructed: what its constructor hands to a library (a
      // connect callback given to undici, say) runs on that member's behalf.
      if (ts.isClassElement(node) && ts.isClassLike(node.parent) && inOurs(node)) {
        queue.push(...node.parent.members.filter((m) => ts.isConstructorDeclaration(m) || (ts.isPropertyDeclaration(m) && m.initializer)));
      }
    }
    return { sites, calls: [...calls].sort(), unknown };
  }
}

/** `sandboxCatalog.run` → `sandboxCatalog.run`; anything else → undefined. */
function catalogKey(node: ts.Node): string | undefined {
  return ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text.endsWith('Catalog') ? node.getText() : undefined;
}
