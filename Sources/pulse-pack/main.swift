import Foundation
import PulsePackCLI

let arguments = Array(CommandLine.arguments.dropFirst())
if let helperArguments = OpsCommands.forwarded(arguments) {
    exit(OpsCommands.exec(helperArguments, printError: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }))
}
exit(PulsePackCLI.main(arguments))
