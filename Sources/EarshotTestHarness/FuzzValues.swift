import EarshotDBus
import Foundation
import Glibc

/// Makes values for the bus fuzzer from a seeded generator: boundaries, empty and huge
/// values, Unicode and control characters, invalid UTF-8 in byte arrays, deep variants,
/// dictionaries with known and unknown keys, descriptors of every kind, and mutations of
/// valid requests (a key dropped, added, retyped or pushed to an edge).
public struct FuzzValues {
    public var generator: SeededGenerator
    let material: FuzzMaterial
    /// Strings and object paths seen in replies (piece ids, request objects), reused as
    /// arguments so calls reach real objects.
    var harvested: [String] = []
    var harvestedPaths: [ObjectPath] = []
    /// Descriptors the current call may still open for values of random type (each is a
    /// real open file until the call is sent).
    var descriptorBudget = 8

    public init(seed: UInt64, material: FuzzMaterial) {
        generator = SeededGenerator(seed: seed)
        self.material = material
    }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &generator)] }
    mutating func count(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }

    /// Keeps strings and paths from a reply for later calls (at most 64 of each).
    mutating func harvest(_ values: [DBusValue]) {
        for value in values {
            switch value {
            case .string(let s) where !s.isEmpty && s.utf8.count < 200 && !s.hasPrefix("/"):
                harvested.append(s)
            case .objectPath(let p):
                harvestedPaths.append(p)
            case .variant(let inner): harvest([inner])
            case .array(_, let items): harvest(Array(items.prefix(8)))
            case .structure(let fields): harvest(fields)
            case .dictionary(_, _, let entries): harvest(entries.prefix(16).map(\.value))
            default: break
            }
        }
        if harvested.count > 64 { harvested.removeFirst(harvested.count - 64) }
        if harvestedPaths.count > 64 { harvestedPaths.removeFirst(harvestedPaths.count - 64) }
    }

    // MARK: Values of a given type

    /// A value of `type`; containers nest at most a few levels below `depth`.
    public mutating func value(_ type: DBusType, depth: Int = 0) -> DBusValue {
        switch type {
        case .byte: .byte(integer(UInt8.self))
        case .boolean: .boolean(chance(50))
        case .int16: .int16(integer(Int16.self))
        case .uint16: .uint16(integer(UInt16.self))
        case .int32: .int32(integer(Int32.self))
        case .uint32: .uint32(integer(UInt32.self))
        case .int64: .int64(integer(Int64.self))
        case .uint64: .uint64(integer(UInt64.self))
        case .double: .double(double())
        case .string: .string(string())
        case .objectPath: .objectPath(objectPath())
        case .signature: .signature(pick(["", "s", "a{sv}", "v", "(((((i)))))", "aaaaay", "a{s(sb)}", "h"]))
        case .unixFD: .unixFD(descriptor())
        case .variant: variant(depth: depth)
        case .array(.byte): .bytes(DBusBytes(bytes()))
        case .array(.unixFD):
            // A message carries at most a few descriptors (the bus limits them).
            .array(.unixFD, (0..<count(0...2)).map { _ in .unixFD(descriptor()) })
        case .array(let element):
            .array(element, (0..<elementCount(depth, of: element)).map { _ in value(element, depth: depth + 1) })
        case .dictionary(let key, let valueType):
            .dictionary(key: key, value: valueType, (0..<elementCount(depth, of: valueType)).map { _ in
                DBusValue.DictionaryEntry(key == .string && chance(70) ? .string(pick(material.words)) : value(key, depth: depth + 1),
                                          value(valueType, depth: depth + 1))
            })
        case .structure(let fields): .structure(fields.map { value($0, depth: depth + 1) })
        }
    }

    /// How many elements a container gets: a few, sometimes thousands, but never more than
    /// two of anything holding descriptors (each is a real open file until sent).
    mutating func elementCount(_ depth: Int, of element: DBusType) -> Int {
        if element.signature.contains("h") { return count(0...2) }
        if depth > 3 { return count(0...1) }
        if depth == 0 && chance(3) { return count(100...2000) }  // large, but only at the top
        return count(0...4)
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T {
        switch count(0...9) {
        case 0: return T.min
        case 1: return T.max
        case 2: return 0
        case 3: return 1
        case 4: return T.isSigned ? -1 : T.max - 1
        case 5: return T(truncatingIfNeeded: pick([8000, 16000, 22050, 44100, 48000, 100, 1000, 60000, 1_000_000, 1_000_001, 1_200_000_000]))
        case 6, 7: return T(truncatingIfNeeded: count(0...200))
        default: return T.random(in: T.min...T.max, using: &generator)
        }
    }

    mutating func double() -> Double {
        switch count(0...9) {
        case 0: return pick([.nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude])
        case 1: return pick([0, -0.0, .leastNonzeroMagnitude, 1e-9])
        case 2: return pick([1, 2.9, 3, 10, 10.1, 60, 999.999, 1000, 16000, 48000, 0.005, 0.5])
        case 3: return -Double(count(1...1000))
        default: return Double.random(in: -1e6...1e6, using: &generator)
        }
    }

    /// Never an absolute path outside the material: services refuse relative paths, and a
    /// random absolute one could name a file worth keeping.
    mutating func string() -> String {
        switch count(0...13) {
        case 0: return ""
        case 1: return pick(material.words)
        case 2: return pick(material.paths)
        case 3: return pick(material.exportPaths)
        case 4: return pick(["\t", "\n", "   ", "a\tb", "line\nbreak", "\u{1}\u{7f}", "%s%n%x", "'; DROP TABLE pieces; --"])
        case 5: return pick(["日本語のテキスト", "🎵🎶🏳️‍🌈", "e\u{301}\u{301}\u{301}", "\u{202e}reversed", "\u{feff}bom", "𝄞"])
        case 6: return String(repeating: pick(["x", "é", "🎵"]), count: count(49...52))
        case 7: return String(repeating: "long text ", count: count(50...6000))
        case 8: return harvested.isEmpty ? "missing" : pick(harvested)
        case 9: return pick(["0", "-1", "18446744073709551616", "1e309", "NaN", "true", "16KHZ"])
        default:
            let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.:,!?")
            return String((0..<count(1...24)).map { _ in pick(alphabet) })
        }
    }

    mutating func objectPath() -> ObjectPath {
        if !harvestedPaths.isEmpty && chance(40) { return pick(harvestedPaths) }
        let candidates = ["/", "/org", "/org/earshot", "/org/earshot/Capture1/PassThru/999999",
                          "/org/earshot/Alerts1/Alert/0", "/org/earshot/Pieces1", "/a/b/c_d/E9"]
        return (try? ObjectPath(pick(candidates))) ?? .root
    }

    mutating func bytes() -> [UInt8] {
        switch count(0...6) {
        case 0: return []
        case 1: return pick([[0xC3, 0x28], [0xFF, 0xFE, 0xFD], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE2, 0x82]])
        case 2: return Array(repeating: 0, count: count(1...65536))
        case 3: return Array(material.wave.utf8) + [0]
        default: return (0..<count(1...64)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
    }

    /// A descriptor of some kind: a file (valid audio, garbage, empty), a directory, a
    /// device, an empty pipe, a pipe whose writer is gone, a socket.
    mutating func descriptor() -> UnixFD {
        descriptorBudget -= 1
        func opened(_ path: String, _ flags: Int32 = O_RDONLY) -> UnixFD { UnixFD(taking: open(path, flags | O_CLOEXEC)) }
        switch count(0...7) {
        case 0, 1: return opened(material.wave)
        case 2: return opened(material.paths[1])
        case 3: return opened(material.paths[2])
        case 4: return opened(material.directory.path, O_RDONLY | O_DIRECTORY)
        case 5: return opened(pick(["/dev/null", "/dev/zero"]))
        case 6:
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return opened("/dev/null") }
            close(ends[1])  // the reader sees end of file at once
            return UnixFD(taking: ends[0])
        default:
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return opened("/dev/null") }
            close(pair[1])
            return UnixFD(taking: pair[0])
        }
    }

    mutating func variant(depth: Int) -> DBusValue {
        if depth < 2 && chance(5) {
            // A deep chain of variants (the specification allows 32 container levels).
            var inner: DBusValue = .string("deep")
            for _ in 0..<count(8...30) { inner = .variant(inner) }
            return .variant(inner)
        }
        return .variant(value(randomType(depth: depth + 1), depth: depth + 1))
    }

    /// Any complete type; containers only above `depth` 3.
    public mutating func randomType(depth: Int = 0) -> DBusType {
        let basics: [DBusType] = [.byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double,
                                  .string, .objectPath, .signature] + (descriptorBudget > 0 ? [.unixFD] : [])
        guard depth < 3, chance(30) else { return pick(basics) }
        switch count(0...4) {
        case 0: return .array(randomType(depth: depth + 1))
        case 1: return .dictionary(key: pick(basics.filter { $0 != .unixFD }), value: randomType(depth: depth + 1))
        case 2: return .dictionary(key: .string, value: .variant)
        case 3: return .structure((0..<count(1...3)).map { _ in randomType(depth: depth + 1) })
        default: return .variant
        }
    }

    /// Argument types other than `expected`: too few, too many, or others.
    public mutating func wrongSignature(than expected: [DBusType]) -> [DBusType] {
        for _ in 0..<8 {
            let types: [DBusType] = switch count(0...3) {
            case 0: Array(expected.dropLast())
            case 1: expected + [randomType()]
            case 2: expected.map { chance(50) ? randomType() : $0 }
            default: (0..<count(0...3)).map { _ in randomType() }
            }
            if types != expected { return types }
        }
        return expected + [.string]
    }

    // MARK: Mutating valid requests

    /// `request` with one to three changes. `a{sv}` dictionaries are changed key by key;
    /// other values are replaced by a random value of their type.
    public mutating func mutate(_ arguments: [DBusValue]) -> [DBusValue] {
        var result = arguments
        guard !result.isEmpty else { return result }
        for _ in 0..<count(1...3) {
            let index = count(0...(result.count - 1))
            result[index] = mutate(value: result[index])
        }
        return result
    }

    mutating func mutate(value: DBusValue) -> DBusValue {
        guard case .dictionary(.string, .variant, var entries) = value else {
            return chance(70) ? self.value(value.type) : value
        }
        switch count(0...6) {
        case 0 where !entries.isEmpty:
            entries.remove(at: count(0...(entries.count - 1)))
        case 1:
            let key = chance(50) ? pick(material.words) : "Unknown" + String(count(0...999))
            entries.append(.init(.string(key), variant(depth: 1)))
        case 2 where !entries.isEmpty:
            // A value of another type under a known key.
            let index = count(0...(entries.count - 1))
            entries[index].value = .variant(self.value(randomType(depth: 2), depth: 2))
        case 3 where !entries.isEmpty:
            // The same type, pushed to an edge.
            let index = count(0...(entries.count - 1))
            if case .variant(let inner) = entries[index].value { entries[index].value = .variant(self.value(inner.type, depth: 1)) }
        case 4 where !entries.isEmpty:
            // A variant inside the variant.
            let index = count(0...(entries.count - 1))
            entries[index].value = .variant(entries[index].value)
        case 5 where entries.count > 1:
            // A duplicated key with another value.
            let index = count(0...(entries.count - 1))
            entries.append(.init(entries[index].key, variant(depth: 1)))
        default:
            entries.append(.init(.string(pick(material.words)), variant(depth: 1)))
        }
        return .dictionary(key: .string, value: .variant, entries)
    }
}
