/** Redfish error bodies with standard Base registry MessageIds (DSP0266 §9.6). */
export interface RedfishErrorReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function redfishError(
  status: number,
  messageId: string,
  message: string,
  args: string[] = [],
  headers?: Record<string, string>,
): RedfishErrorReply {
  return {
    status,
    ...(headers ? { headers } : {}),
    body: {
      error: {
        code: `Base.1.18.${messageId}`,
        message,
        '@Message.ExtendedInfo': [
          {
            '@odata.type': '#Message.v1_1_1.Message',
            MessageId: `Base.1.18.${messageId}`,
            Message: message,
            MessageArgs: args,
            Severity: status >= 500 ? 'Critical' : 'Warning',
            Resolution: 'See the message text.',
          },
        ],
      },
    },
  };
}
