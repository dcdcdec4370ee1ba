#!/usr/bin/env python3
"""Generates Tools/AvailabilityCheck's symbol table from an Apple SDK (issue 48).

    generate-table.py --sdk PATH/iPhoneOS18.6.sdk [--package DIR] [--out FILE] [--keep DIR]

Run by a developer who has an SDK (CI only reads the committed table). For every Apple module the
package imports (found by scanning the Swift sources named in --scan, default the package's
Sources, Tests and Examples; plus the standard library's implicitly imported modules), the Swift
view of the module is printed with the toolchain's `swift-synthesize-interface`: the module's
`.swiftinterface` (standard library, Swift overlays, Foundation) merged with what the Clang
importer makes of its framework headers (`API_AVAILABLE` becomes `@available`), exactly as
the compiler sees them for the target. From those declarations the script keeps what matching
needs, nothing more (no types, no parameters' types, no documentation):

  D <module> <owner> <name> <params> <iOS> <macOS>   every overload of an (owner, name) pair of
        which at least one overload is introduced after the deployment target (iOS or macOS), so
        the check can tell `String(validating:as:)` (iOS 18) from `String(validatingCString:)`;
        owner is the enclosing type's name ("" at top level), params the argument labels
        ("validating,as"; "?" marks a defaulted parameter, "^" a closure-typed one, "" a
        declaration that is not a function), versions "" when unrestricted, "-" when
        unavailable, "?" when the SDK does not say (the Clang importer of an iOS SDK prints no
        macOS availability for Objective-C declarations).
  A <modules> <name> <first label> <iOS> <macOS>   member names that every declaration in these modules
        introduces after the deployment target, for members reached on a value of unknown type
        (`manager.foo(bar:)`) or as an implicit member (`.foo`): first label "." for a property or
        case, "_" for an unlabelled first argument.
  R <module> <modules>   what importing a module makes visible (its imports among these modules).

Deployment floors come from the package's Package.swift (`platforms:`), or --ios / --macos.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

STDLIB = ["Swift", "_Concurrency", "_StringProcessing"]
# Modules whose declarations a module's users see as its own (SwiftUI's split since iOS 18).
COMPANIONS = {"SwiftUI": ["SwiftUICore"]}
# Not Apple SDK modules (or not Apple's): never looked up in the SDK.
SKIP_PREFIXES = ("Beekon", "CZlib", "Glibc", "Musl", "FoundationXML", "FoundationNetworking", "Testing", "XCTest")

MODIFIERS = {
    "public", "open", "final", "static", "mutating", "nonmutating", "override", "convenience", "required", "dynamic",
    "optional", "lazy", "weak", "unowned", "nonisolated", "indirect", "prefix", "postfix", "infix", "package", "internal",
    "borrowing", "consuming", "distributed", "isolated", "unowned(unsafe)", "unowned(safe)", "nonisolated(unsafe)",
    "private", "fileprivate", "__consuming", "async", "@objc",
}
TYPE_KEYWORDS = {"struct", "class", "enum", "protocol", "actor", "extension"}


def version_key(text):
    """'' (unrestricted) < versions < '-' (unavailable); '?' (unknown) is handled by the callers."""
    if text == "":
        return (0,)
    if text == "-":
        return (10**6,)
    return tuple(int(p) for p in text.split("."))


def later(a, b):
    """The stricter of two requirements of one platform (an enclosing context's and a member's)."""
    if a == "?" or b == "?":
        known = a if b == "?" else b
        return "?" if known in ("", "?") else known  # a known bound is still a lower bound
    return a if version_key(a) >= version_key(b) else b


def earliest(a, b):
    """The looser of two overloads' requirements (what a call that may pick either needs)."""
    if a == "?" or b == "?":
        return "?"
    return a if version_key(a) <= version_key(b) else b


def parse_available(args):
    """`@available(…)` arguments -> (iOS, macOS) requirement; None for an attribute about neither."""
    items = [i.strip() for i in split_top(args, ",")]
    if not items:
        return None
    first = items[0].split()
    platforms = {"iOS": "iOS", "iOSApplicationExtension": None, "macOS": "macOS", "OSX": "macOS", "macOSApplicationExtension": None}
    ios = mac = None
    if first[0] == "*":
        if "unavailable" in items:
            return ("-", "-")
        return None
    if len(first) == 1:
        platform = platforms.get(first[0])
        if platform is None:
            return None
        value = None
        if "unavailable" in items:
            value = "-"
        for item in items[1:]:
            if item.startswith("introduced:"):
                value = item.split(":", 1)[1].strip()
        if value is None:
            return None
        return (value, None) if platform == "iOS" else (None, value)
    for item in items:
        words = item.split()
        if len(words) == 2 and words[0] in ("iOS", "macOS", "OSX") and re.fullmatch(r"[0-9.]+", words[1]):
            if words[0] == "iOS":
                ios = words[1]
            else:
                mac = words[1]
    if ios is None and mac is None:
        return None
    return (ios, mac)


def split_top(text, sep):
    """Splits at `sep` outside (), [], <>, {} and string literals."""
    parts, depth, current, in_string, prev = [], 0, "", False, ""
    for ch in text:
        if ch == '"' and prev != "\\":
            in_string = not in_string
        if not in_string:
            if ch in "([{<":
                depth += 1
            elif ch in ")]}>" and not (ch == ">" and prev == "-"):
                depth -= 1
            elif ch == sep and depth == 0:
                parts.append(current)
                current = ""
                prev = ch
                continue
        current += ch
        prev = ch
    if current.strip():
        parts.append(current)
    return parts


def matching(text, start):
    """Index of the bracket closing the one at `start`."""
    pairs = {"(": ")", "<": ">", "[": "]"}
    opening, closing, depth, prev = text[start], pairs[text[start]], 0, ""
    for i in range(start, len(text)):
        ch = text[i]
        if ch == opening:
            depth += 1
        elif ch == closing and not (ch == ">" and prev == "-"):
            depth -= 1
            if depth == 0:
                return i
        prev = ch
    return -1


def params_signature(text):
    """'(validating codeUnits: some Sequence, as encoding: E.Type)' -> 'validating,as'."""
    inner = text[1:-1]
    labels = []
    for param in split_top(inner, ","):
        head, _, rest = param.partition(":")
        words = head.split()
        if not words:
            continue
        label = words[0]
        flags = ""
        if "=" in split_top_keep(rest):
            flags += "?"
        if "->" in rest:
            flags += "^"
        labels.append(flags + label)
    return ",".join(labels)


def split_top_keep(text):
    """The characters of `text` at nesting depth 0 (to find a default's `=`)."""
    out, depth, prev = "", 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not (ch == ">" and prev == "-"):
            depth -= 1
        elif depth == 0:
            out += ch
        prev = ch
    return out.replace("->", "").replace("==", "")


ATTRIBUTE = re.compile(r"^@[A-Za-z_][A-Za-z0-9_.]*")


def strip_attributes(line):
    """Removes leading attributes, returning (attribute texts, rest)."""
    attributes = []
    rest = line.strip()
    while rest.startswith("@"):
        m = ATTRIBUTE.match(rest)
        if not m:
            break
        end = m.end()
        if end < len(rest) and rest[end] == "(":
            close = matching(rest, end)
            if close < 0:
                break
            end = close + 1
        attributes.append(rest[:end])
        rest = rest[end:].strip()
    return attributes, rest


def declaration(rest):
    """(keyword, name, signature, remaining text) of a declaration line without attributes."""
    words = rest.split()
    i = 0
    while i < len(words):
        w = words[i]
        if w in MODIFIERS or w.startswith("@") or re.fullmatch(r"(unowned|nonisolated|private|fileprivate|internal|public|package)\(\w+\)", w):
            i += 1
            continue
        if w == "class" and i + 1 < len(words) and words[i + 1] in ("func", "var", "let", "subscript"):
            i += 1
            continue
        break
    if i >= len(words):
        return None
    keyword = words[i]
    tail = " ".join(words[i + 1:])
    if keyword in TYPE_KEYWORDS or keyword in ("typealias", "macro", "func", "var", "let", "case"):
        m = re.match(r"`?([A-Za-z_][A-Za-z0-9_]*)`?((?:\.[A-Za-z_][A-Za-z0-9_]*)*)", tail)
        if not m:
            return None
        name = (m.group(1) + m.group(2)).split(".")[-1] if keyword == "extension" else m.group(1)
        return keyword, name, tail[m.end():]
    if keyword.startswith("init"):
        return "init", "init", rest[rest.index("init") + 4:]
    return None


def function_signature(after_name):
    """Argument labels of the parameter clause after a function's name (generics skipped)."""
    s = after_name.lstrip("?!").lstrip()
    if s.startswith("<"):
        close = matching(s, 0)
        if close < 0:
            return ""
        s = s[close + 1:].lstrip()
    if not s.startswith("("):
        return ""
    close = matching(s, 0)
    if close < 0:
        return ""
    return "(" + params_signature(s[: close + 1]) + ")"


def parse_module(module, text):
    """Every declaration of a synthesized interface as (module, owner, name, params, iOS, macOS)."""
    declarations = []
    imports = set()
    stack = []  # (kind, name, iOS, macOS) for type contexts, or None for any other brace
    pending = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        m = re.match(r"^(@_exported )?import (?:(?:struct|class|enum|protocol|typealias|func|var) )?([A-Za-z_][A-Za-z0-9_]*)", line)
        if m and not stack:
            imports.add(m.group(2))
            continue
        # Tuple labels in types (`typealias Element = (offset: Int, element: Base.Element)`,
        # `-> (key: K, value: V)`) are members too: `$0.element` must never look like a new API.
        for segment in ([line.split("= ", 1)[1]] if "typealias" in line and "= (" in line else []) + (
                [line.rsplit("->", 1)[1]] if "->" in line else []):
            for label in re.findall(r"[(,]\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s", segment):
                declarations.append((module, "(tuple)", label, "", "", "", "var"))
        attributes, rest = strip_attributes(line)
        pending.extend(attributes)
        if not rest:
            continue
        opens = rest.count("{") - rest.count("}")
        info = declaration(rest)
        in_body = any(c is None for c in stack)
        context_ios = context_mac = ""
        for c in stack:
            if c is not None:
                context_ios = later(context_ios, c[2])
                context_mac = later(context_mac, c[3])
        ios, mac = "", ""
        for attribute in pending:
            if attribute.startswith("@available("):
                parsed = parse_available(attribute[len("@available("):-1])
                if parsed is None:
                    continue
                if parsed[0] is not None:
                    ios = later(ios, parsed[0])
                if parsed[1] is not None:
                    mac = later(mac, parsed[1])
                elif parsed[0] is not None and parsed[0] != "-" and mac == "":
                    mac = "?"  # an iOS version with no word about macOS
        if mac == "?" and any("macOS" in a and "unavailable" in a for a in pending):
            mac = "-"
        ios, mac = later(context_ios, ios), later(context_mac, mac)
        pending = []
        owner = ""
        for c in reversed(stack):
            if c is not None:
                owner = c[1]
                break
        if info and not in_body:
            keyword, name, after = info
            if keyword in TYPE_KEYWORDS:
                if keyword != "extension":
                    declarations.append((module, owner, name, "", ios, mac, "type"))
                if opens > 0:
                    stack.append((keyword, name, ios if keyword != "extension" else ios, mac))
                    for _ in range(opens - 1):
                        stack.append(None)
                continue
            if keyword in ("func", "init", "macro"):
                declarations.append((module, owner, name, function_signature(after), ios, mac, keyword))
            elif keyword == "case":
                for item in split_top(rest[rest.index("case") + 4:], ","):
                    cm = re.match(r"\s*`?([A-Za-z_][A-Za-z0-9_]*)", item)
                    if cm:
                        declarations.append((module, owner, cm.group(1), "", ios, mac, "case"))
            elif keyword in ("var", "let"):
                declarations.append((module, owner, name, "", ios, mac, "var"))
            elif keyword == "typealias":
                declarations.append((module, owner, name, "", ios, mac, "type"))
        for _ in range(max(0, opens)):
            stack.append(None)
        for _ in range(max(0, -opens)):
            if stack:
                stack.pop()
    return declarations, imports


def is_new(ios, mac, floor_ios, floor_mac):
    if ios == "-":
        return False  # unavailable on iOS: not a question of version
    newer_ios = ios not in ("", "?") and version_key(ios) > version_key(floor_ios)
    newer_mac = mac not in ("", "?", "-") and version_key(mac) > version_key(floor_mac)
    return newer_ios or newer_mac


def package_floors(package):
    text = open(os.path.join(package, "Package.swift"), encoding="utf-8").read()
    m = re.search(r"platforms:\s*\[([^\]]*)\]", text)
    floors = {}
    for platform, major, minor in re.findall(r"\.(iOS|macOS)\(\.v(\d+)(?:_(\d+))?", m.group(1) if m else ""):
        floors[platform] = f"{major}.{minor or 0}"
    return floors.get("iOS", "16.0"), floors.get("macOS", "13.0")


def imported_modules(directories):
    modules = set()
    for directory in directories:
        for root, _, files in os.walk(directory):
            if "/.build" in root:
                continue
            for f in files:
                if not f.endswith(".swift"):
                    continue
                for line in open(os.path.join(root, f), encoding="utf-8", errors="replace"):
                    m = re.match(r"\s*(?:@\w+\s+)*(?:public |internal |package )?import (?:(?:struct|class|enum|protocol|func|var) )?([A-Za-z_][A-Za-z0-9_]*)", line)
                    if m:
                        modules.add(m.group(1))
    return modules


def sdk_has(sdk, module):
    if os.path.isdir(os.path.join(sdk, "usr/lib/swift", module + ".swiftmodule")):
        return True
    if os.path.isdir(os.path.join(sdk, "System/Library/Frameworks", module + ".framework")):
        return True
    return module in ("os", "Dispatch", "Darwin")


def resource_dir(work):
    """A resource directory for a Darwin target on a Linux toolchain (as the ios-typecheck tool makes)."""
    swiftc = os.path.realpath(subprocess.check_output(["sh", "-c", "command -v swiftc"], text=True).strip())
    lib = os.path.join(os.path.dirname(swiftc), "..", "lib", "swift")
    rd = os.path.join(work, "rd")
    os.makedirs(rd, exist_ok=True)
    for name in ("shims", "clang"):
        target = os.path.join(rd, name)
        if not os.path.lexists(target):
            os.symlink(os.path.realpath(os.path.join(lib, name)), target)
    with open(os.path.join(rd, "module.modulemap"), "w") as f:
        for m in ("SwiftShims", "_SwiftConcurrencyShims", "SwiftOverlayShims", "_SynchronizationShims"):
            f.write(f'extern module {m} "shims/module.modulemap"\n')
    return rd


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--sdk", required=True)
    parser.add_argument("--package", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--scan", nargs="*", help="source folders whose imports decide the modules (default: Sources Tests Examples)")
    parser.add_argument("--extra-modules", nargs="*", default=[], help="more SDK modules to include")
    parser.add_argument("--ios")
    parser.add_argument("--macos")
    parser.add_argument(
        "--resource-dir",
        help="a Darwin resource dir (default: one made from the toolchain's shims and clang headers; a Linux toolchain has no "
        "os.apinotes, which the `os` overlay needs: pass the ios-typecheck tool's, or run on a Mac)")
    parser.add_argument("--keep", help="keep the synthesized interfaces in this folder")
    parser.add_argument("--out", default=os.path.join(here, "Sources", "AvailabilityCheckCore", "GeneratedSymbolTable.swift"))
    args = parser.parse_args()

    sdk = os.path.abspath(args.sdk)
    settings = json.load(open(os.path.join(sdk, "SDKSettings.json")))
    floor_ios, floor_mac = package_floors(args.package)
    floor_ios, floor_mac = args.ios or floor_ios, args.macos or floor_mac
    scan = args.scan or [os.path.join(args.package, d) for d in ("Sources", "Tests", "Examples")]
    wanted = sorted((imported_modules(scan) | set(args.extra_modules)) - {"Swift"})
    wanted = sorted(set(wanted) | {c for m in wanted for c in COMPANIONS.get(m, ())})
    modules = STDLIB + [m for m in wanted if not m.startswith(SKIP_PREFIXES) and m not in STDLIB and sdk_has(sdk, m)]

    work = args.keep or tempfile.mkdtemp(prefix="availability-table-")
    os.makedirs(work, exist_ok=True)
    rd = args.resource_dir or resource_dir(work)
    declarations, imports = [], {}
    for module in modules:
        out = os.path.join(work, module + ".swift")
        command = ["swift-synthesize-interface", "-include-submodules", "-module-name", module, "-target", f"arm64-apple-ios{floor_ios}",
                   "-sdk", sdk, "-resource-dir", rd, "-module-cache-path", os.path.join(work, "mc"), "-o", out]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0 or not os.path.exists(out):
            sys.exit(f"swift-synthesize-interface failed for {module}:\n{result.stderr[-2000:]}")
        found, imported = parse_module(module, open(out, encoding="utf-8").read())
        declarations += found
        imports[module] = imported
        print(f"{module}: {len(found)} declarations", file=sys.stderr)

    # Groups of overloads with at least one new member, all their overloads (deduplicated).
    groups = {}
    for d in declarations:
        groups.setdefault((d[1], d[2]), set()).add(d[:6])
    d_lines = set()
    for (owner, name), members in groups.items():
        if name.startswith("_") or not any(is_new(m[4], m[5], floor_ios, floor_mac) for m in members):
            continue
        merged = {}
        for m in members:
            key = (m[0], m[1], m[2], m[3])
            if key in merged:
                old = merged[key]
                merged[key] = (earliest(old[0], m[4]), earliest(old[1], m[5]))
            else:
                merged[key] = (m[4], m[5])
        for (module, o, n, params), (ios, mac) in merged.items():
            d_lines.add("\t".join(["D", module, o, n, params, ios, mac]))

    # Member names every declaration introduces after the floors (by first label).
    by_member = {}
    for d in declarations:
        if d[1] == "" or d[2] == "init" or d[6] == "type":
            continue
        params = d[3]
        if params == "":
            key = "."
        else:
            inner = params[1:-1]
            first = inner.split(",")[0] if inner else ""
            key = first.lstrip("?^") or ")"
        ios, mac, owners = by_member.get((d[2], key), (None, None, set()))
        by_member[(d[2], key)] = (
            d[4] if ios is None else earliest(ios, d[4]), d[5] if mac is None else earliest(mac, d[5]), owners | {d[0]})
    a_lines = set()
    for (name, key), (ios, mac, owners) in by_member.items():
        if not name.startswith("_") and is_new(ios, mac, floor_ios, floor_mac):
            a_lines.add("\t".join(["A", ",".join(sorted(owners)), name, key, ios, mac]))

    r_lines = []
    for module in modules:
        closure, todo = set(), [module]
        while todo:
            for i in imports.get(todo.pop(), ()):
                if i in modules and i not in closure and i != module:
                    closure.add(i)
                    todo.append(i)
        r_lines.append("\t".join(["R", module, ",".join(sorted(closure))]))

    body = "\n".join(r_lines + sorted(d_lines) + sorted(a_lines))
    today = datetime.date.today().isoformat()
    sdk_name = settings.get("DisplayName", os.path.basename(sdk))
    relative_out = os.path.relpath(args.out, args.package)
    header = [
        "// GENERATED by Tools/AvailabilityCheck/generate-table.py; do not edit (regenerate it).",
        f"// SDK: {sdk_name} ({os.path.basename(sdk)}, SDKSettings Version {settings.get('Version')}), generated {today}",
        f"// with {subprocess.check_output(['swiftc', '--version'], text=True, stderr=subprocess.STDOUT).splitlines()[0]}:",
        f"//   Tools/AvailabilityCheck/generate-table.py --sdk <path>/{os.path.basename(sdk)}" + (f" --out {relative_out}" if relative_out != "Tools/AvailabilityCheck/Sources/AvailabilityCheckCore/GeneratedSymbolTable.swift" else ""),
        f"// Floors: iOS {floor_ios}, macOS {floor_mac} (Package.swift). Modules: {', '.join(modules)}.",
        f"// {len(d_lines)} overloads in {len({(l.split(chr(9))[2], l.split(chr(9))[3]) for l in d_lines})} groups, {len(a_lines)} member names.",
        "// Lines: D module owner name params iOS macOS | A modules name first-label iOS macOS | R module visible-modules",
        "// (see generate-table.py for the meaning of each field).",
    ]
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n\n")
        f.write("extension SymbolTable {\n")
        f.write(f'    /// Where the generated entries come from.\n    public static let generatedProvenance = "{sdk_name}, generated {today}, floors iOS {floor_ios} macOS {floor_mac}"\n\n')
        f.write("    /// The generated entries, one per line (parsed once by `SymbolTable.generated`).\n")
        # Indented as swift-format indents a multi-line literal (the indentation is not part of the string).
        indented = "\n".join("        " + line for line in body.split("\n"))
        f.write('    static let generatedText = #"""\n' + indented + '\n        """#\n}\n')
    print(f"wrote {args.out}: {len(d_lines)} D, {len(a_lines)} A, {len(r_lines)} R lines, {os.path.getsize(args.out)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
