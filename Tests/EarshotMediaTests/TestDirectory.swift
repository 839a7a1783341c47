import Foundation

/// A private temporary directory for one test, removed with everything in it when the
/// value goes away.
final class TestDirectory {
    let path: String

    init() {
        var template = Array("/tmp/earshot-media-tests.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) -> String {
        let path = file(name)
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            fatalError("cannot create \(path)")
        }
        return path
    }

    func read(_ path: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { fatalError("cannot read \(path)") }
        return [UInt8](data)
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
}
