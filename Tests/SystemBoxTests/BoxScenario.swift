import EarshotTestHarness
import Foundation
import Testing

/// What the scenarios share: the box, busctl as one of its users, the microphone, and what
/// the speakers play.
enum BoxScenario {
    /// The box `deploy/earshot-dev test-system` booted; the suite runs only inside that.
    static var box: SystemBox { SystemBox.current! }
    static var isBooted: Bool { SystemBox.current != nil }

    /// `busctl --system` with `arguments` (already quoted for the shell) as `user`.
    @discardableResult
    static func busctl(_ arguments: String, as user: String) async throws -> String {
        try await box.run("busctl --system \(arguments)", as: user)
    }

    /// A property of an object, as busctl prints it (`s "finished"`).
    static func property(_ service: String, _ path: String, _ interface: String, _ name: String, as user: String) async throws -> String {
        try await busctl("get-property \(service) \(path) \(interface) \(name)", as: user).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The quoted string of a busctl reply line such as `o "/org/earshot/Capture1/PassThru/3"`.
    static func quoted(_ reply: String) throws -> String {
        let parts = reply.split(separator: "\"", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { throw HarnessError("no quoted value in '\(reply)'") }
        return String(parts[1])
    }

    /// Runs `body` while `file` (in `user`'s home in the box) plays into the box's microphone.
    static func feedingMicrophone<T>(_ file: String, as user: String, _ body: () async throws -> T) async throws -> T {
        try await box.with("/usr/local/lib/earshot-box/feed-microphone \(file)", as: user, name: "microphone") { _ in try await body() }
    }

    /// The samples of a 16-bit mono WAV file on the host.
    static func samples(ofWave url: URL) throws -> [Int16] {
        let bytes = [UInt8](try Data(contentsOf: url))
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            if id == "data" {
                let end = min(bytes.count, offset + 8 + size)
                return stride(from: offset + 8, to: end - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
            }
            offset += 8 + size + (size & 1)
        }
        throw HarnessError("\(url.path) has no data chunk")
    }

    /// Where `excerpt` (past its leading silence) lies in `whole`: the offset of its first
    /// sound in `whole`, or nil when its samples are not a run of `whole`'s.
    static func place(_ excerpt: [Int16], in whole: [Int16]) -> (excerptStart: Int, wholeStart: Int)? {
        guard let first = excerpt.firstIndex(where: { $0 != 0 }), excerpt.count - first >= 64 else { return nil }
        let probe = Array(excerpt[first..<first + 64])
        var index = 0
        while index + probe.count <= whole.count {
            if whole[index] == probe[0], Array(whole[index..<index + probe.count]) == probe { return (first, index) }
            index += 1
        }
        return nil
    }
}
