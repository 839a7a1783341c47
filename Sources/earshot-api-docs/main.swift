import EarshotContract
import Foundation

// Writes the API reference rendered from EarshotContract into a directory (docs/api by
// default), replacing the pages there and removing pages of interfaces no longer declared.
let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: earshot-api-docs [DIRECTORY]\nWrites docs/api (or DIRECTORY) from the contract declared in EarshotContract.")
    exit(0)
}
let directory = URL(fileURLWithPath: arguments.first ?? "docs/api")
do {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let pages = APIPages.all()
    let names = Set(pages.map(\.name))
    for old in try FileManager.default.contentsOfDirectory(atPath: directory.path) where old.hasSuffix(".md") && !names.contains(old) {
        try FileManager.default.removeItem(at: directory.appendingPathComponent(old))
    }
    for page in pages {
        try page.text.write(to: directory.appendingPathComponent(page.name), atomically: true, encoding: .utf8)
    }
    print("wrote \(pages.count) pages to \(directory.path)")
} catch {
    FileHandle.standardError.write(Data("earshot-api-docs: \(error)\n".utf8))
    exit(1)
}
