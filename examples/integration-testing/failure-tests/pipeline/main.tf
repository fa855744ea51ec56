# The module under test (two folders up), deployed or not: a run that sets
# deployed = false destroys it as `terraform destroy` would, guard first.
variable "deployed" {
  type = bool
}

variable "account_id" {
  type = string
}

module "pipeline" {
  source = "../.."
  count  = var.deployed ? 1 : 0

  account_id = var.account_id
}

output "backup_id" {
  value = one(module.pipeline[*].backup_id)
}
