import EarshotMedia
import Foundation
import Testing

@Suite struct SHA256Tests {
    let directory = TestDirectory()

    @Test func filesMatchSha256sum() throws {
        let urandom = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        let data = try urandom.read(upToCount: 5 * 1024 * 1024)
        let random = [UInt8](try #require(data))
        #expect(random.count == 5 * 1024 * 1024)
        let files = [
            directory.write("empty", []),
            directory.write("three", Array("abc".utf8)),
            directory.write("random", random),
        ]
        for path in files {
            let ours = try FileHashing.sha256(path: path)
            let theirs = try ExternalTools.sha256sum(path)
            #expect(ours == theirs, "\(path)")
        }
    }

    @Test func knownVectorsAndPieces() {
        var empty = SHA256Hasher()
        empty.update(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(empty.finalize() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        var whole = SHA256Hasher()
        message.withUnsafeBytes { whole.update($0) }
        var pieces = SHA256Hasher()
        for start in stride(from: 0, to: message.count, by: 7) {
            message[start ..< min(message.count, start + 7)].withUnsafeBytes { pieces.update($0) }
        }
        let expected = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        #expect(whole.finalize() == expected)
        #expect(pieces.finalize() == expected)
    }

    @Test func missingFileIsAnIOError() {
        do {
            _ = try FileHashing.sha256(path: directory.file("missing"))
            Issue.record("hashed a missing file")
        } catch {
            #expect(error.kind == .io)
        }
    }
}
