/**
 * Standard Redfish messages (DMTF registries Base 1.22, TaskEvent 1.0, Update 1.3, ResourceEvent 1.4).
 * Only the messages the simulator emits are listed; texts follow the published registries so clients
 * that match on MessageId or Message see what a real BMC sends.
 */
type Severity = 'OK' | 'Warning' | 'Critical';
interface Definition {
  text: string;
  severity: Severity;
  resolution: string;
}

const registries = {
  Base: {
    prefix: 'Base.1.22',
    messages: {
      ResourceNotFound: {
        text: "The requested resource of type %1 named '%2' was not found.",
        severity: 'Critical',
        resolution: 'Provide a valid resource identifier and resubmit the request.',
      },
      NoValidSession: {
        text: 'There is no valid session established with the implementation.',
        severity: 'Critical',
        resolution: 'Establish a session before attempting any operations.',
      },
      SessionLimitExceeded: {
        text:
          'The session establishment failed due to the number of simultaneous sessions exceeding the limit ' +
          'of the implementation.',
        severity: 'Critical',
        resolution:
          'Reduce the number of other sessions before trying to establish the session or increase the ' +
          'limit of simultaneous sessions, if supported.',
      },
      SessionTerminated: { text: 'The session was successfully terminated.', severity: 'OK', resolution: 'None.' },
      OperationNotAllowed: {
        text: 'The HTTP method is not allowed on this resource.',
        severity: 'Critical',
        resolution: 'None.',
      },
      ActionParameterMissing: {
        text: 'The action %1 requires the parameter %2 to be present in the request body.',
        severity: 'Critical',
        resolution:
          'Supply the action with the required parameter in the request body when the request is resubmitted.',
      },
      ActionParameterValueNotInList: {
        text: "The value '%1' for the parameter %2 in the action %3 is not in the list of acceptable values.",
        severity: 'Warning',
        resolution:
          'Choose a value from the enumeration list that the implementation can support and resubmit the ' +
          'request if the operation failed.',
      },
      ActionParameterValueError: {
        text: 'The value for the parameter %1 in the action %2 is invalid.',
        severity: 'Warning',
        resolution:
          'Correct the value for the parameter in the request body and resubmit the request if the operation failed.',
      },
      ActionParameterValueTypeError: {
        text: "The value '%1' for the parameter %2 in the action %3 is not a type that the parameter can accept.",
        severity: 'Warning',
        resolution:
          'Correct the value for the parameter in the request body and resubmit the request if the operation failed.',
      },
      MalformedJSON: {
        text: 'The request body submitted was malformed JSON and could not be parsed by the receiving service.',
        severity: 'Critical',
        resolution: 'Ensure that the request body is valid JSON and resubmit the request.',
      },
      EmptyJSON: {
        text: 'The request body submitted contained an empty JSON object and the service is unable to process it.',
        severity: 'Warning',
        resolution: 'Add properties in the JSON object and resubmit the request.',
      },
      PayloadTooLarge: {
        text: 'The supplied payload exceeds the maximum size supported by the service.',
        severity: 'Critical',
        resolution: 'Correct the request body and resubmit the request if it failed.',
      },
      MissingOrMalformedPart: {
        text: 'The multipart request contains malformed parts or is missing required parts.',
        severity: 'Critical',
        resolution: 'Add any missing required parts or correct the malformed parts and resubmit the request.',
      },
      PropertyUnknown: {
        text: 'The property %1 is not in the list of valid properties for the resource.',
        severity: 'Warning',
        resolution:
          'Remove the unknown property from the request body and resubmit the request if the operation failed.',
      },
      PropertyNotWritable: {
        text: 'The property %1 is a read-only property and cannot be assigned a value.',
        severity: 'Warning',
        resolution: 'Remove the property from the request body and resubmit the request if the operation failed.',
      },
      PropertyValueTypeError: {
        text: "The value '%1' for the property %2 is not a type that the property can accept.",
        severity: 'Warning',
        resolution:
          'Correct the value for the property in the request body and resubmit the request if the operation failed.',
      },
      PropertyMissing: {
        text: 'The property %1 is a required property and must be included in the request.',
        severity: 'Warning',
        resolution:
          'Ensure that the property is in the request body and has a valid value and resubmit the request ' +
          'if the operation failed.',
      },
      PreconditionFailed: {
        text: 'The ETag supplied did not match the ETag required to change this resource.',
        severity: 'Critical',
        resolution: 'Try the operation again using the appropriate ETag.',
      },
      ServiceTemporarilyUnavailable: {
        text: 'The service is temporarily unavailable.  Retry in %1 seconds.',
        severity: 'Critical',
        resolution: 'Wait for the indicated retry duration and retry the operation.',
      },
      InternalError: {
        text: 'The request failed due to an internal service error.  The service is still operational.',
        severity: 'Critical',
        resolution: 'Resubmit the request.  If the problem persists, consider resetting the service.',
      },
      ResourceInUse: {
        text: 'The change to the requested resource failed because the resource is in use or in transition.',
        severity: 'Warning',
        resolution: 'Remove the condition and resubmit the request if the operation failed.',
      },
      UnrecognizedRequestBody: {
        text: 'The service detected a malformed request body that it was unable to interpret.',
        severity: 'Warning',
        resolution: 'Correct the request body and resubmit the request if it failed.',
      },
      QueryNotSupported: {
        text: 'Querying is not supported by the implementation.',
        severity: 'Warning',
        resolution: 'Remove the query parameters and resubmit the request if the operation failed.',
      },
      HeaderInvalid: {
        text: "Header '%1' is invalid.",
        severity: 'Critical',
        resolution: 'Resubmit the request with a valid header.',
      },
      QueryParameterUnsupported: {
        text: "Query parameter '%1' is not supported.",
        severity: 'Warning',
        resolution: 'Correct or remove the query parameter and resubmit the request.',
      },
      QueryParameterValueFormatError: {
        text: "The value '%1' for the parameter %2 is not a format that the parameter can accept.",
        severity: 'Warning',
        resolution:
          'Correct the value for the query parameter in the request and resubmit the request if the operation failed.',
      },
      QueryParameterOutOfRange: {
        text: "The value '%1' for the query parameter %2 is out of range %3.",
        severity: 'Warning',
        resolution:
          'Reduce the value for the query parameter to a value that is within range, such as a start or count value ' +
          'that is within bounds of the number of resources in a collection or a page number that is within the ' +
          'range of valid pages.',
      },
      Success: { text: 'The request completed successfully.', severity: 'OK', resolution: 'None.' },
      PropertyValueFormatError: {
        text: "The value '%1' for the property %2 is not a format that the property can accept.",
        severity: 'Warning',
        resolution:
          'Correct the value for the property in the request body and resubmit the request if the operation failed.',
      },
      PropertyValueNotInList: {
        text: "The value '%1' for the property %2 is not in the list of acceptable values.",
        severity: 'Warning',
        resolution:
          'Choose a value from the enumeration list that the implementation can support and resubmit the ' +
          'request if the operation failed.',
      },
      CreateFailedMissingReqProperties: {
        text: 'The create operation failed because the required property %1 was missing from the request.',
        severity: 'Critical',
        resolution:
          'Correct the body to include the required property with a valid value and resubmit the request if the ' +
          'operation failed.',
      },
      EventSubscriptionLimitExceeded: {
        text:
          'The event subscription failed due to the number of simultaneous subscriptions exceeding the limit ' +
          'of the implementation.',
        severity: 'Critical',
        resolution:
          'Reduce the number of other subscriptions before trying to establish the event subscription or ' +
          'increase the limit of simultaneous subscriptions, if supported.',
      },
    },
  },
  TaskEvent: {
    prefix: 'TaskEvent.1.0',
    messages: {
      TaskStarted: { text: "The task with Id '%1' has started.", severity: 'OK', resolution: 'None.' },
      TaskProgressChanged: {
        text: "The task with Id '%1' has changed to progress %2 percent complete.",
        severity: 'OK',
        resolution: 'None.',
      },
      TaskCompletedOK: { text: "The task with Id '%1' has completed.", severity: 'OK', resolution: 'None.' },
      TaskCompletedWarning: {
        text: "The task with Id '%1' has completed with warnings.",
        severity: 'Warning',
        resolution: 'None.',
      },
      TaskAborted: {
        text: "The task with Id '%1' has completed with errors.",
        severity: 'Critical',
        resolution: 'None.',
      },
    },
  },
  Update: {
    prefix: 'Update.1.3',
    messages: {
      TargetDetermined: {
        text: "The target device '%1' will be updated with image '%2'.",
        severity: 'OK',
        resolution: 'None.',
      },
      UpdateNotApplicable: {
        text: "Image '%1' was not applicable to device '%2'.",
        severity: 'Warning',
        resolution: 'Use an image that is applicable to the device.',
      },
      TransferringToComponent: {
        text: "Image '%1' is being transferred to '%2'.",
        severity: 'OK',
        resolution: 'None.',
      },
      VerificationFailed: {
        text: "Verification of image '%1' at '%2' failed.",
        severity: 'Critical',
        resolution: 'None.',
      },
      ApplyFailed: { text: "Installation of image '%1' to '%2' failed.", severity: 'Critical', resolution: 'None.' },
      UpdateSuccessful: {
        text: "Device '%1' successfully updated with image '%2'.",
        severity: 'OK',
        resolution: 'None.',
      },
      UpdateSkippedSameVersion: {
        text: "Device '%1' skipped the update with image '%2' because the same version is already installed.",
        severity: 'OK',
        resolution: 'None.',
      },
      AwaitToActivate: {
        text: "Awaiting for an action to proceed with activating image '%1' on '%2'.",
        severity: 'OK',
        resolution: 'Perform the requested action to advance the update operation.',
      },
    },
  },
  ResourceEvent: {
    prefix: 'ResourceEvent.1.4',
    messages: {
      ResourceErrorsDetected: {
        text: "The resource property %1 has detected errors of type '%2'.",
        severity: 'Warning',
        resolution: 'Resolution dependent upon error type.',
      },
      ResourceErrorsCorrected: {
        text: "The resource property %1 has corrected errors of type '%2'.",
        severity: 'OK',
        resolution: 'None.',
      },
      ResourceStatusChangedOK: {
        text: "The health of resource '%1' has changed to %2.",
        severity: 'OK',
        resolution: 'None.',
      },
      ResourceStatusChangedWarning: {
        text: "The health of resource '%1' has changed to %2.",
        severity: 'Warning',
        resolution: 'None.',
      },
      ResourceStatusChangedCritical: {
        text: "The health of resource '%1' has changed to %2.",
        severity: 'Critical',
        resolution: 'None.',
      },
      ResourcePoweredOn: { text: "The resource '%1' has powered on.", severity: 'OK', resolution: 'None.' },
      ResourcePoweredOff: { text: "The resource '%1' has powered off.", severity: 'OK', resolution: 'None.' },
      TestMessage: { text: 'Test message.', severity: 'OK', resolution: 'None.' },
    },
  },
} as const satisfies Record<string, { prefix: string; messages: Record<string, Definition> }>;

type Registries = typeof registries;
export type RegistryName = keyof Registries;
export type MessageKey<R extends RegistryName> = keyof Registries[R]['messages'] & string;

export interface RedfishMessage {
  '@odata.type': '#Message.v1_1_1.Message';
  MessageId: string;
  Message: string;
  MessageArgs: string[];
  MessageSeverity: Severity;
  Resolution: string;
}

export function message<R extends RegistryName>(registry: R, key: MessageKey<R>, args: string[] = []): RedfishMessage {
  const reg = registries[registry];
  const def = (reg.messages as Record<string, Definition>)[key]!;
  return {
    '@odata.type': '#Message.v1_1_1.Message',
    MessageId: `${reg.prefix}.${key}`,
    Message: def.text.replace(/%(\d+)/g, (_, n: string) => args[Number(n) - 1] ?? ''),
    MessageArgs: args,
    MessageSeverity: def.severity,
    Resolution: def.resolution,
  };
}
