import Foundation
import PulseCommandLine
import PulseOps

/// The `pulse-pack-ops` executable: pulse-pack's push and gc, which `pulse-pack` hands over to.
public enum OpsCLI {
    public static func root(_ environment: OpsEnvironment) -> Command {
        Command(
            name: "pulse-pack",
            abstract: "Publish packages to a folder or S3 and collect what they no longer need.",
            subcommands: [PushCommand.make(environment), GCCommand.make(environment)])
    }

    /// Runs `arguments` (without the program name); returns the exit code.
    public static func main(_ arguments: [String], environment: OpsEnvironment = .process) -> Int32 {
        CommandLineTool.main(
            root(environment), arguments: arguments,
            errorHandler: { error in
                environment.console.err("pulse-pack: error: \(error)")
                return ExitCode.failure
            },
            print: environment.console.out, printError: environment.console.err)
    }
}
