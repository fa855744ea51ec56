# Switches on one of the mock Backup Service's failure controls (its admin
# API, as the guide's curl lines call it): POST
# $BACKUP_BASE_URL/_mock/accounts/<account_id>/<control>, or
# /_mock/<control> without an account, with body. The settings come from the
# environment the mock's -env-file gave the pipeline, so that the admin
# token never reaches the state. A refusal (a malformed body, say) fails the
# run, with the mock's problem document in the message.
variable "control" {
  description = "The control, for example fail-backups, hold, state; or answers, clock without account_id."
  type        = string
}

variable "account_id" {
  description = "The account the control acts on; null for answers and clock."
  type        = string
  default     = null
}

variable "body" {
  description = "The control's JSON body, as an object."
  type        = any
  default     = {}
}

locals {
  path = var.account_id == null ? "/_mock/${var.control}" : "/_mock/accounts/${var.account_id}/${var.control}"
}

resource "terraform_data" "call" {
  triggers_replace = [local.path, jsonencode(var.body)]

  provisioner "local-exec" {
    command = "curl -sS --fail-with-body -X POST -H \"Authorization: Bearer $BACKUP_MOCK_ADMIN_TOKEN\" -H 'Content-Type: application/json' -d \"$BODY\" \"$BACKUP_BASE_URL$ADMIN_PATH\""
    environment = {
      ADMIN_PATH = local.path
      BODY       = jsonencode(var.body)
    }
  }
}
