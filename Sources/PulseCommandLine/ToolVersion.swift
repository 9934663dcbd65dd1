/// The version every executable prints for `--version` (`pulse-pack 0.2.0`): kept here, in one place,
/// so that a tool added later gets it through `CommandLineTool` without a line of its own. Raise it
/// with each release; `Scripts/build-release` prints it next to `git describe`.
public enum ToolVersion {
    public static let current = "0.2.0"
}
