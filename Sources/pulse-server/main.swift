import Foundation
import PulseServerCLI

exit(ServerCommand.main(Array(CommandLine.arguments.dropFirst())))
