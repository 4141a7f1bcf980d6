"""The fulfillment team's use cases (gRPC FulfillmentService, the CLI).

- `reports`: `report_step` (ReportStep), `retry_step` (RetryStep), `mark_domain_burned`
  (MarkDomainBurned).
- `work`: `list_work` (ListWork), `work_changes` (StreamWork).
- `burned_domains`: the burned-domain jobs (`brj_`) a report starts.
"""
