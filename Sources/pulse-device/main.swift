import Foundation
import PulseDevice

exit(DeviceCommand.main(Array(CommandLine.arguments.dropFirst())))
