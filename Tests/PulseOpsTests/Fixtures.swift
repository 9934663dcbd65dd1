import Foundation

/// Test fixtures live in `Tests/Fixtures/` (not a target) and are found through `#filePath`,
/// so a fresh clone needs nothing outside the repository.
enum Fixtures {
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let folder = packageRoot.appendingPathComponent("Tests/Fixtures")
}
